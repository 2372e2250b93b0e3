package eval

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"sync"
)

// idSeed seeds every evaluation store's ids (SeededIDs). Any constant
// does; changing it reorders rank ties, so it stays put.
var idSeed = [32]byte{'m', 'e', 'm', 't', 'r', 'a', 'y', ' ', 'e', 'v', 'a', 'l', ' ', 'i', 'd', 's'}

// SeededIDs returns a memory id generator for store.Options.NewID (and
// daemon.Options.NewID) that gives the same sequence every time it is
// made: 32 lowercase hex characters from a ChaCha8 stream of a fixed seed,
// the shape of the store's own random ids. Each evaluation store gets a
// new one, so two runs that write the same memories in the same order name
// them alike, and every tie the store and the search break by id (equal
// cosines, equal BM25 scores, equal fused scores) falls the same way: the
// reports and dumps compare byte for byte. The generator is safe for
// concurrent use. It is meant for a new, empty store only: on a store that
// already holds its ids it would hand them out again.
func SeededIDs() func() string {
	var mu sync.Mutex
	r := rand.New(rand.NewChaCha8(idSeed))
	return func() string {
		var b [16]byte
		mu.Lock()
		binary.BigEndian.PutUint64(b[:8], r.Uint64())
		binary.BigEndian.PutUint64(b[8:], r.Uint64())
		mu.Unlock()
		return hex.EncodeToString(b[:])
	}
}
