package daemon

import (
	"errors"
	"sync"
)

// closers is the stack of releases of what Open acquired. Open pushes one
// after each step that holds something; Close, and Open when a later step
// fails, pop them all in reverse order, so both release the same things in
// the same order.
type closers struct {
	mu    sync.Mutex
	stack []func() error
}

// push adds a release to run before every release pushed earlier.
func (c *closers) push(f func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stack = append(c.stack, f)
}

// close runs every release, last pushed first, and empties the stack: a
// second close does nothing. Every release runs even when one fails; the
// errors are joined.
func (c *closers) close() error {
	c.mu.Lock()
	stack := c.stack
	c.stack = nil
	c.mu.Unlock()
	var errs []error
	for i := len(stack) - 1; i >= 0; i-- {
		if err := stack[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
