package ingest

import "github.com/memtray/memtray/backend/redact"

// redactText masks secrets in s (package redact) and counts them.
func redactText(s string) (string, int) {
	out, found := redact.Redact(s)
	return out, len(found)
}
