package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func uiGet(t *testing.T, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7432"+path, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestUIServesBuiltFilesWithSPAFallback(t *testing.T) {
	ui := fstest.MapFS{
		"index.html":         {Data: []byte(`<!doctype html><script type="module" src="/assets/app-1.js"></script>`)},
		"assets/app-1.js":    {Data: []byte(`console.log(1)`)},
		"assets/app-1.css":   {Data: []byte(`body{}`)},
		"favicon.svg":        {Data: []byte(`<svg/>`)},
		"assets/sub/x.woff2": {Data: []byte(`w`)},
	}
	h := New(Services{}, Options{Token: "t", Listen: "127.0.0.1:7432", UI: ui})
	for _, tc := range []struct {
		path, want, ctype string
		status            int
	}{
		{"/", `<script type="module"`, "text/html", 200},
		{"/memories", `<script type="module"`, "text/html", 200},
		{"/settings/capture", `<script type="module"`, "text/html", 200},
		{"/assets/app-1.js", "console.log(1)", "javascript", 200},
		{"/assets/app-1.css", "body{}", "text/css", 200},
		{"/favicon.svg", "<svg/>", "image/svg+xml", 200},
		{"/assets/missing.js", "", "", 404},
		{"/secret.txt", "", "", 404},
	} {
		w := uiGet(t, h, tc.path)
		if w.Code != tc.status {
			t.Errorf("GET %s: status %d, want %d", tc.path, w.Code, tc.status)
			continue
		}
		if tc.status != 200 {
			continue
		}
		if !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("GET %s: body %q lacks %q", tc.path, w.Body.String(), tc.want)
		}
		if ct := w.Header().Get("Content-Type"); !strings.Contains(ct, tc.ctype) {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, ct, tc.ctype)
		}
		csp := w.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "script-src 'self';") {
			t.Errorf("GET %s: CSP %q is not tight", tc.path, csp)
		}
		if strings.Contains(csp, "unsafe-eval") || strings.Contains(strings.Split(strings.Split(csp, "script-src")[1], ";")[0], "unsafe-inline") {
			t.Errorf("GET %s: CSP %q allows inline or eval'd scripts", tc.path, csp)
		}
	}
	if cc := uiGet(t, h, "/assets/app-1.js").Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("hashed asset Cache-Control %q, want immutable", cc)
	}
	if cc := uiGet(t, h, "/").Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("index Cache-Control %q, want no-cache", cc)
	}
}

func TestUIDoesNotShadowTheAPI(t *testing.T) {
	h := New(Services{}, Options{Token: "t", Listen: "127.0.0.1:7432", UI: fstest.MapFS{"index.html": {Data: []byte("app")}}})
	// Without the token an unknown API path is refused like any other.
	if w := uiGet(t, h, "/api/nope"); w.Code != http.StatusUnauthorized {
		t.Errorf("GET /api/nope without token: %d, want 401", w.Code)
	}
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7432/api/nope", nil)
	r.Header.Set("Authorization", "Bearer t")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusNotFound || !strings.Contains(w.Header().Get("Content-Type"), "json") {
		t.Errorf("GET /api/nope: %d %q, want a JSON 404", w.Code, w.Header().Get("Content-Type"))
	}
	// The UI itself needs no token (its API calls do), but the Host check holds.
	if w := uiGet(t, h, "/"); w.Code != 200 || w.Body.String() != "app" {
		t.Errorf("GET / : %d %q", w.Code, w.Body.String())
	}
	r = httptest.NewRequest(http.MethodGet, "http://evil.example:7432/", nil)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMisdirectedRequest {
		t.Errorf("GET / with a foreign Host: %d, want 421", w.Code)
	}
}

func TestUIPlaceholderWithoutBuild(t *testing.T) {
	for name, ui := range map[string]fstest.MapFS{"nil": nil, "empty": {".gitkeep": {}}} {
		opts := Options{Token: "t", Listen: "127.0.0.1:7432"}
		if ui != nil {
			opts.UI = ui
		}
		h := New(Services{}, opts)
		w := uiGet(t, h, "/")
		if w.Code != 200 || !strings.Contains(w.Body.String(), "npm run build") {
			t.Errorf("%s: GET / = %d %q, want the build instructions", name, w.Code, w.Body.String())
		}
		if w := uiGet(t, h, "/memories"); w.Code != http.StatusNotFound {
			t.Errorf("%s: GET /memories = %d, want 404", name, w.Code)
		}
	}
}
