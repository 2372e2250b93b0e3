//go:build desktop && !linux

package main

// focusRunning is left to Wails' single-instance lock outside Linux.
func focusRunning(string) bool { return false }
