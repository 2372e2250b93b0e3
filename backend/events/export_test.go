package events

// LastID is the ID of the newest event published (FirstID-1 before any).
// Only the tests need it.
func (b *Bus) LastID() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next - 1
}
