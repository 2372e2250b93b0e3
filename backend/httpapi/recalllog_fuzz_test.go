package httpapi

import (
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/store"
)

// FuzzParseRecallLogQuery: any query string parses to a query within
// bounds or an error, never a panic.
func FuzzParseRecallLogQuery(f *testing.F) {
	for _, s := range []string{"", "limit=5", "session=s1&before=10", "limit=1001", "before=0", "before=18446744073709551615", "session=%ff", "limit=-1&limit=3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := parseRecallLogQuery(v)
		if err != nil {
			return
		}
		if q.Limit < 1 || q.Limit > store.MaxRecallLogLimit || len(q.SessionID) > 256 || !utf8.ValidString(q.SessionID) {
			t.Fatalf("%q parsed out of bounds: %+v", raw, q)
		}
	})
}
