// Package assets holds memtray's binary assets: the tray icons for each
// state. They are drawn by ./internal/genicons; regenerate them with
// `go generate ./assets` (the PNGs are committed).
package assets

import _ "embed"

//go:generate go run ./internal/genicons -assets . -build ../build

// AppIcon is the window icon (256x256 PNG; build/appicon.png is the 512px one).
//
//go:embed app-icon.png
var AppIcon []byte

// Tray icons, 64x64 PNG, for Linux (StatusNotifierItem) and macOS.
var (
	//go:embed tray-capturing.png
	TrayCapturing []byte
	//go:embed tray-paused.png
	TrayPaused []byte
	//go:embed tray-error.png
	TrayError []byte
)

// The same icons as ICO, for the Windows notification area.
var (
	//go:embed tray-capturing.ico
	TrayCapturingICO []byte
	//go:embed tray-paused.ico
	TrayPausedICO []byte
	//go:embed tray-error.ico
	TrayErrorICO []byte
)
