package httpapi

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
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
		{"no token", NewCredentials(""), &http.Cookie{Name: cookieName + "_7432", Value: ""}, false},
		{"the raw token as cookie", NewCredentials(tok), &http.Cookie{Name: cookieName + "_7432", Value: tok}, false},
		{"empty cookie", NewCredentials(tok), &http.Cookie{Name: cookieName + "_7432", Value: ""}, false},
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

// TestSessionLifetime: the daemon itself refuses a session cookie older
// than SessionLifetime (a browser may keep it longer), one from the
// future, and anything not made for the token.
func TestSessionLifetime(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := NewCredentials(tok)
	c.now = func() time.Time { return now }
	at := func(d time.Duration) string { return sessionValue(tok, now.Add(d).Unix()) }
	for _, tc := range []struct {
		name  string
		value string
		want  bool
	}{
		{"just issued", c.session(), true},
		{"almost 12 hours old", at(-SessionLifetime + time.Second), true},
		{"older than 12 hours", at(-SessionLifetime - time.Second), false},
		{"half a minute ahead (a clock step)", at(30 * time.Second), true},
		{"from the future", at(2 * time.Minute), false},
		{"another token's", sessionValue(strings.Repeat("f", 64), now.Unix()), false},
		{"its time changed", strconv.FormatInt(now.Unix()-1, 10) + c.session()[strings.Index(c.session(), "."):], false},
		{"no time", strings.SplitN(c.session(), ".", 2)[1], false},
		{"a negative time", "-1." + strings.SplitN(c.session(), ".", 2)[1], false},
		{"a huge time", "99999999999999999999." + strings.SplitN(c.session(), ".", 2)[1], false},
		{"empty", "", false},
		{"the token", tok, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.validSession(tc.value); got != tc.want {
				t.Fatalf("validSession(%q) = %v, want %v", tc.value, got, tc.want)
			}
		})
	}
}

// FuzzValidSession: no cookie value panics the check, and only values
// made for the token pass.
func FuzzValidSession(f *testing.F) {
	const tok = "t0k"
	c := NewCredentials(tok)
	f.Add(c.session())
	f.Add("1.")
	f.Add("")
	f.Add("x.y.z")
	f.Add("-9223372036854775808.00")
	f.Fuzz(func(t *testing.T, v string) {
		if c.validSession(v) {
			ts, _, _ := strings.Cut(v, ".")
			at, err := strconv.ParseInt(ts, 10, 64)
			if err != nil || v != sessionValue(tok, at) {
				t.Fatalf("accepted %q, which was not made for the token", v)
			}
		}
	})
}

// TestHealthProofNeverACookie: /api/health answers an unauthenticated
// challenge with an HMAC of the token; no challenge may make that the
// session cookie.
func TestHealthProofNeverACookie(t *testing.T) {
	const tok = "t0k"
	now := time.Now().Unix()
	v := sessionValue(tok, now)
	mac := v[strings.Index(v, ".")+1:]
	for _, ch := range []string{"", "session", sessionContext, strings.TrimPrefix(sessionContext, "memtray-"), "cookie:v1:" + strconv.FormatInt(now, 10)} {
		if Proof(tok, ch) == mac {
			t.Fatalf("challenge %q yields the session cookie", ch)
		}
	}
}

// TestSessionCookiePerPort: browsers keep one cookie per name and host,
// whatever the port, so each daemon names its session cookie after its
// port; logging into a second daemon on the same host leaves the first
// one's session alone.
func TestSessionCookiePerPort(t *testing.T) {
	toks := []string{strings.Repeat("a", 64), strings.Repeat("b", 64)}
	ports := []string{"7432", "7433"}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	var hs []*Handler
	for i, tok := range toks {
		h := New(Services{}, Options{Token: tok, Listen: "127.0.0.1:" + ports[i]})
		hs = append(hs, h)
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:"+ports[i]+"/login?token="+tok, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got := w.Result().Cookies(); len(got) != 1 || got[0].Name != "memtray_token_"+ports[i] {
			t.Fatalf("login on port %s set %v", ports[i], got)
		}
		jar.SetCookies(r.URL, w.Result().Cookies())
	}
	for i, h := range hs {
		u, _ := url.Parse("http://127.0.0.1:" + ports[i] + "/api/stats")
		r := httptest.NewRequest(http.MethodGet, u.String(), nil)
		for _, c := range jar.Cookies(u) {
			r.AddCookie(c)
		}
		if !h.authorized(r) {
			t.Errorf("the daemon on port %s lost its session when the other logged in", ports[i])
		}
	}
	for _, tc := range []struct{ host, want string }{
		{"127.0.0.1:7432", "memtray_token_7432"},
		{"[::1]:9000", "memtray_token_9000"},
		{"localhost", "memtray_token"},
	} {
		if got := sessionCookieName(&http.Request{Host: tc.host}); got != tc.want {
			t.Errorf("sessionCookieName(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}

// TestLoginWrongToken: a login with a wrong token (a typo in the login
// form, a link printed before `memtray token rotate`) is refused with a
// page that says what to do and links back to the login; it showed the
// browser the API's raw JSON error.
func TestLoginWrongToken(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	h := New(Services{}, Options{Token: tok, Listen: "127.0.0.1:7432"})
	for _, path := range []string{"/login?token=wrong", "/login?token=", "/login"} {
		res := uiGet(t, h, path).Result()
		body := new(strings.Builder)
		io.Copy(body, res.Body)
		if res.StatusCode != http.StatusUnauthorized || len(res.Cookies()) != 0 {
			t.Errorf("%s: %d, cookies %v", path, res.StatusCode, res.Cookies())
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		for _, want := range []string{"memtray token", `<a href="/">log in again</a>`} {
			if !strings.Contains(body.String(), want) {
				t.Errorf("%s: the page lacks %q:\n%s", path, want, body)
			}
		}
	}
}
