//go:build desktop && !production && !dev

package main

// Wails refuses to run without the production (or dev) tag. Build the
// desktop app with `make desktop`, or:
//
//	go build -tags desktop,production,webkit2_41 ./app
var _ = BUILD_WITH_TAGS_desktop_production_webkit2_41
