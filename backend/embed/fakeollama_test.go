package embed

import (
	"testing"

	"github.com/memtray/memtray/backend/embed/ollamafake"
)

// newFakeOllama starts a fake Ollama with the recorded models
// (nomic-embed-text, llama3.2), embedding with 16 dimensions.
func newFakeOllama(t testing.TB) *ollamafake.Server {
	t.Helper()
	return ollamafake.New(t, ollamafake.Options{})
}
