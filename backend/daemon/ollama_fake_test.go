package daemon

import (
	"testing"

	"github.com/memtray/memtray/backend/embed/ollamafake"
)

// newFakeOllama starts a fake Ollama (package ollamafake) that has the
// models named (tag included, e.g. "nomic-embed-text:latest") and embeds
// with dim dimensions.
func newFakeOllama(t testing.TB, dim int, installed ...string) *ollamafake.Server {
	t.Helper()
	return ollamafake.New(t, ollamafake.Options{Models: append([]string{}, installed...), Dim: dim})
}
