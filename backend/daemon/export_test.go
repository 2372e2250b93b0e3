package daemon

// ServeWith is serveWith for the external tests (package daemon_test).
var ServeWith = serveWith
