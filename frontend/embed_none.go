//go:build nofrontend

package frontend

import (
	"embed"
	"io/fs"
)

var empty embed.FS

// Dist returns an empty file system: this build leaves the UI out, and the
// daemon serves a page saying how to build it.
func Dist() fs.FS { return empty }
