package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// loginCookie logs in to h with token and returns the session cookie.
func loginCookie(t *testing.T, h http.Handler, token string) *http.Cookie {
	t.Helper()
	w := uiGet(t, h, "/login?token="+token)
	res := w.Result()
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("login answered %d with cookies %v", res.StatusCode, res.Cookies())
	}
	return res.Cookies()[0]
}

// TestSessionSurvivesRestart: a session cookie is a function of the
// persisted token, so a daemon started again on the same token (a new
// Handler with new Credentials) accepts the cookies the last one handed
// out, while a rotated token refuses them (issue 21 bug 7: a restart
// logged the browser out).
func TestSessionSurvivesRestart(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	first := New(Services{}, Options{Token: tok, Listen: "127.0.0.1:7432"})
	cookie := loginCookie(t, first, tok)
	if strings.Contains(cookie.Value, tok) {
		t.Fatal("the cookie carries the install token")
	}
	for _, tc := range []struct {
		name   string
		cred   *Credentials
		cookie *http.Cookie
		want   bool
	}{
		{"same process", first.cred, cookie, true},
		{"restarted on the same token", NewCredentials(tok), cookie, true},
		{"rotated token", NewCredentials(strings.Repeat("f", 64)), cookie, false},
		{"no token", NewCredentials(""), &http.Cookie{Name: cookieName, Value: ""}, false},
		{"the raw token as cookie", NewCredentials(tok), &http.Cookie{Name: cookieName, Value: tok}, false},
		{"empty cookie", NewCredentials(tok), &http.Cookie{Name: cookieName, Value: ""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(Services{}, Options{Credentials: tc.cred, Listen: "127.0.0.1:7432"})
			r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7432/api/stats", nil)
			r.AddCookie(tc.cookie)
			if got := h.authorized(r); got != tc.want {
				t.Fatalf("authorized = %v, want %v", got, tc.want)
			}
		})
	}
	// Rotation in place refuses the old cookie and hands out a new one.
	c := NewCredentials(tok)
	h := New(Services{}, Options{Credentials: c, Listen: "127.0.0.1:7432"})
	c.Set(strings.Repeat("e", 64))
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:7432/api/stats", nil)
	r.AddCookie(cookie)
	if h.authorized(r) {
		t.Fatal("a rotated token still accepts the old cookie")
	}
	if nc := loginCookie(t, h, strings.Repeat("e", 64)); nc.Value == cookie.Value {
		t.Fatal("rotation kept the cookie value")
	}
}

// TestHealthProofNeverACookie: /api/health answers an unauthenticated
// challenge with an HMAC of the token; no challenge may make that the
// session cookie.
func TestHealthProofNeverACookie(t *testing.T) {
	const tok = "t0k"
	for _, ch := range []string{"", "session", sessionContext, strings.TrimPrefix(sessionContext, "memtray-"), "cookie:v1"} {
		if Proof(tok, ch) == sessionValue(tok) {
			t.Fatalf("challenge %q yields the session cookie", ch)
		}
	}
}
