package httpapi

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// uiCSP is the Content-Security-Policy of the UI's pages: scripts, styles,
// fonts, images and connections (the API, the event stream) come from this
// origin only, and no inline script runs. Inline style attributes are
// allowed: Svelte sets element styles (bar widths, list offsets) that way.
const uiCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
	"frame-ancestors 'none'; form-action 'self'"

// hasUI reports whether fsys holds a built UI (an index.html).
func hasUI(fsys fs.FS) bool {
	if fsys == nil {
		return false
	}
	st, err := fs.Stat(fsys, "index.html")
	return err == nil && !st.IsDir()
}

// index serves the UI: a file of Options.UI when the path names one, else
// index.html (the UI routes on the client), and, when no UI is built, a page
// saying how to build it. Unknown /api/ paths answer a JSON 404.
func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api" || strings.HasPrefix(r.URL.Path, "/api/") {
		writeError(w, http.StatusNotFound, errors.New("no such API route: see README.md for the routes"))
		return
	}
	w.Header().Set("Content-Security-Policy", uiCSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if !hasUI(h.opts.UI) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, placeholderHTML)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name != "" && name != "index.html" {
		if st, err := fs.Stat(h.opts.UI, name); err == nil && !st.IsDir() {
			if strings.HasPrefix(name, "assets/") {
				// Vite names assets by content hash.
				w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			} else {
				w.Header().Set("Cache-Control", "no-cache")
			}
			http.ServeFileFS(w, r, h.opts.UI, name)
			return
		}
		if path.Ext(name) != "" && !strings.HasSuffix(name, ".html") {
			// A missing asset is a 404, not the app's page.
			http.NotFound(w, r)
			return
		}
	}
	data, err := fs.ReadFile(h.opts.UI, "index.html")
	if err != nil {
		writeErr(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	if r.Method != http.MethodHead {
		w.Write(data)
	}
}

const placeholderHTML = `<!doctype html><meta charset="utf-8"><title>memtray</title>
<body style="font-family:system-ui;max-width:40em;margin:3em auto">
<h1>memtray</h1><p>The daemon is running, but this binary was built without its UI.
Build the UI, then memtray:</p>
<pre>cd frontend &amp;&amp; npm ci &amp;&amp; npm run build &amp;&amp; cd ..
go build -o bin/memtray ./app</pre>
<p>Meanwhile the <code>memtray</code> CLI and the JSON API under <code>/api/</code> work.</p></body>`
