//go:build desktop

package main

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/godbus/dbus/v5"
)

// focusRunning asks a running memtray on the same data dir to show its
// window, and reports whether one answered. Wails' own lock does the same,
// but only after OnStartup has begun (on Linux it runs first, in a
// goroutine), and after this process opened the daemon: asking first keeps
// a second launch from touching the store or showing a second tray icon.
// The bus name and message are Wails' (internal/frontend/desktop/linux).
func focusRunning(uid string) bool {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return false // no session bus: Wails' lock cannot work either
	}
	defer conn.Close()
	id := "wails_app_" + strings.NewReplacer("-", "_", ".", "_").Replace(uid)
	name, path := "org."+id+".SingleInstance", dbus.ObjectPath("/org/"+id+"/SingleInstance")
	var owned bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&owned); err != nil || !owned {
		return false
	}
	wd, _ := os.Getwd()
	msg, _ := json.Marshal(map[string]any{"Args": os.Args[1:], "WorkingDirectory": wd})
	return conn.Object(name, path).Call(name+".SendMessage", 0, string(msg)).Err == nil
}
