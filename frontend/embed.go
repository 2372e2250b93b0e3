//go:build !nofrontend

// Package frontend holds memtray's Svelte UI. Dist is its built form
// (`npm run build` writes dist/), embedded in the binary; build with the
// nofrontend tag to leave it out.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist returns the built UI, rooted at dist/. Before `npm run build` it
// holds only .gitkeep, and the daemon serves a page saying how to build it.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a valid path; fs.Sub cannot fail on it
	}
	return sub
}
