//go:build desktop && linux && !webkit2_41

package main

// On Linux the desktop app must be built against WebKitGTK 4.1: without the
// webkit2_41 tag WebKitGTK sends every request to the AssetServer as a
// body-less GET (POSTs lose their bodies). Build with `make desktop`, or:
//
//	go build -tags desktop,production,webkit2_41 ./app
var _ = BUILD_WITH_TAGS_desktop_production_webkit2_41
