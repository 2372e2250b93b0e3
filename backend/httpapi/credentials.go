package httpapi

import (
	"sync/atomic"
)

// Credentials hold the install token a handler checks and the value of the
// browser's session cookie. The daemon shares one between its handlers and
// replaces the token when it is rotated (POST /api/token/rotate, `memtray
// token rotate`): from then on the old token and every session cookie
// handed out for it are refused, without a restart. Safe for concurrent use.
type Credentials struct {
	p atomic.Pointer[credState]
}

type credState struct {
	token string
	// session is the session cookie's value: never the install token
	// itself, since browsers send localhost cookies to every port, but a
	// one-way function of it (sessionValue). A daemon restarted on the
	// same token file accepts the cookies the last one handed out, so a
	// restart does not log the browser out; a rotation changes it.
	session string
}

// sessionContext separates the cookie's HMAC from the health proof's
// ("memtray-health:" + challenge): /api/health answers anyone, so no
// challenge may make it print a session cookie.
const sessionContext = "memtray-session-cookie:v1"

// sessionValue is the session cookie for token: HMAC-SHA256(token,
// sessionContext), hex. The same token gives the same cookie in every
// process; "" for no token (nothing is accepted then).
func sessionValue(token string) string {
	if token == "" {
		return ""
	}
	return keyedHash([]byte(token), sessionContext)
}

// NewCredentials returns credentials holding token ("" refuses every
// token).
func NewCredentials(token string) *Credentials {
	c := &Credentials{}
	c.Set(token)
	return c
}

// Token returns the current install token.
func (c *Credentials) Token() string { return c.p.Load().token }

// Set replaces the token; the session cookies issued for the old one are
// refused from now on.
func (c *Credentials) Set(token string) {
	c.p.Store(&credState{token: token, session: sessionValue(token)})
}

// session is the cookie value the login link hands out for the current
// token ("" when there is none).
func (c *Credentials) session() string {
	return c.p.Load().session
}
