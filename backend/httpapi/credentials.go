package httpapi

import (
	"crypto/subtle"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// SessionLifetime is how long a browser session lasts: the cookie's
// Max-Age, and what the daemon accepts, whatever the browser keeps.
const SessionLifetime = 12 * time.Hour

// Credentials hold the install token a handler checks and make and check
// the browser's session cookies. The daemon shares one between its
// handlers and replaces the token when it is rotated (POST
// /api/token/rotate, `memtray token rotate`): from then on the old token
// and every session cookie handed out for it are refused, without a
// restart. Safe for concurrent use.
type Credentials struct {
	p atomic.Pointer[string]
	// now is the clock sessions are issued and checked by; nil: time.Now.
	now func() time.Time
}

// sessionContext separates the cookie's HMAC from the health proof's
// ("memtray-health:" + challenge): /api/health answers anyone, so no
// challenge may make it print a session cookie.
const sessionContext = "memtray-session-cookie:v1:"

// sessionValue is the session cookie issued at unix second at for token:
// "<at>.<HMAC-SHA256(token, sessionContext + at), hex>". Never the token
// itself (browsers send localhost cookies to every port), but a function
// of it alone: a daemon restarted on the same token file accepts the
// cookies the last one handed out, so a restart does not log the browser
// out; a rotation changes it. "" for no token.
func sessionValue(token string, at int64) string {
	if token == "" {
		return ""
	}
	ts := strconv.FormatInt(at, 10)
	return ts + "." + keyedHash([]byte(token), sessionContext+ts)
}

// NewCredentials returns credentials holding token ("" refuses every
// token).
func NewCredentials(token string) *Credentials {
	c := &Credentials{}
	c.Set(token)
	return c
}

// Token returns the current install token.
func (c *Credentials) Token() string { return *c.p.Load() }

// Set replaces the token; the session cookies issued for the old one are
// refused from now on.
func (c *Credentials) Set(token string) {
	c.p.Store(&token)
}

func (c *Credentials) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// session is a new session cookie value for the current token ("" when
// there is none).
func (c *Credentials) session() string {
	return sessionValue(c.Token(), c.clock().Unix())
}

// validSession says whether v is a session cookie issued for the current
// token less than SessionLifetime ago (and not in the future, give or
// take a minute of clock step).
func (c *Credentials) validSession(v string) bool {
	tok := c.Token()
	ts, _, ok := strings.Cut(v, ".")
	if tok == "" || !ok || len(ts) > 19 {
		return false
	}
	at, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	now := c.clock()
	issued := time.Unix(at, 0)
	if issued.After(now.Add(time.Minute)) || now.Sub(issued) > SessionLifetime {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(v), []byte(sessionValue(tok, at))) == 1
}
