package httpapi

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestWindowShow: POST /api/window/show brings the desktop app's window
// forward (a second launch's hand-over where the single-instance signal
// does not reach); a headless daemon has no window (404); the token is
// required as on every /api/ route.
func TestWindowShow(t *testing.T) {
	const tok = "t0k"
	var shown atomic.Int32
	for _, tc := range []struct {
		name   string
		show   func()
		bearer string
		want   int
		shown  int32
	}{
		{"desktop app", func() { shown.Add(1) }, tok, http.StatusOK, 1},
		{"headless", nil, tok, http.StatusNotFound, 0},
		{"no token", func() { shown.Add(1) }, "", http.StatusUnauthorized, 0},
		{"wrong token", func() { shown.Add(1) }, "nope", http.StatusUnauthorized, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shown.Store(0)
			h := New(Services{}, Options{Token: tok, Listen: "127.0.0.1:7432", ShowWindow: tc.show})
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7432/api/window/show", nil)
			if tc.bearer != "" {
				r.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want || shown.Load() != tc.shown {
				t.Fatalf("POST /api/window/show: %d %s, shown %d; want %d, shown %d", w.Code, w.Body, shown.Load(), tc.want, tc.shown)
			}
		})
	}
}
