// Package desktoptest tests the built desktop app from outside, as a user's
// desktop would see it: the Wails window under Xvfb (the page loads, reaches
// the API and the event stream through Wails' AssetServer, a screenshot is
// taken) and the tray on a private D-Bus session bus with a minimal
// StatusNotifierWatcher (the item registers, its menu is read with
// com.canonical.dbusmenu.GetLayout, clicks pause capture and quit).
//
// The tests need the app built with the desktop tags, Xvfb, dbus-daemon and
// ImageMagick's import (or xwd); build/test-desktop.sh installs what is
// missing, builds the app and runs them with MEMTRAY_DESKTOP_BIN set.
// Without it they skip.
package desktoptest
