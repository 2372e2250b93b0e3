package httpapi

import (
	"crypto/rand"
	"sync/atomic"
)

// Credentials hold the install token a handler checks and the key of the
// browser's session cookie. The daemon shares one between its handlers and
// replaces the token when it is rotated (POST /api/token/rotate, `memtray
// token rotate`): from then on the old token and every session cookie
// handed out for it are refused, without a restart. Safe for concurrent use.
type Credentials struct {
	p atomic.Pointer[credState]
}

type credState struct {
	token string
	// sessionKey makes the session cookie: never the install token itself,
	// since browsers send localhost cookies to every port, and new at every
	// start and rotation, so a leaked cookie dies with the process or the
	// token.
	sessionKey [32]byte
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

// Set replaces the token and makes a new session key, so cookies issued
// before are refused too.
func (c *Credentials) Set(token string) {
	s := &credState{token: token}
	if _, err := rand.Read(s.sessionKey[:]); err != nil {
		panic("memtray: no randomness for the session key: " + err.Error())
	}
	c.p.Store(s)
}

// session is the cookie value the login link hands out for the current
// token.
func (c *Credentials) session() string {
	s := c.p.Load()
	return keyedHash(s.sessionKey[:], "session")
}
