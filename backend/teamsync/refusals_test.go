package teamsync

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
)

// TestLoadRefusals: a Syncer starts with the refusals and held edits its
// store kept, whether a daemon before held edits stored them (a JSON array
// of refusals) or this one; an unreadable value starts empty.
func TestLoadRefusals(t *testing.T) {
	many := make([]string, 0, maxRefused+2)
	for i := range maxRefused + 2 {
		many = append(many, fmt.Sprintf(`{"id":"r%d","op":"change"}`, i))
	}
	for _, tc := range []struct {
		name        string
		stored      string
		wantRefused []string
		wantHeld    heldEdits
	}{
		{"nothing", ``, nil, nil},
		{"an older daemon's array", `[{"id":"a","op":"delete","outcome":"x"},{"id":"b","op":"change"}]`, []string{"a", "b"}, nil},
		{"the newest of too many", "[" + strings.Join(many, ",") + "]", []string{"r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11"}, nil},
		{"refusals and held edits", `{"refused":[{"id":"a","op":"change"}],"held":[{"id":"a","version":"v1"},{"id":"c","version":"v2","invalid":true}]}`,
			[]string{"a"}, heldEdits{{ID: "a", Version: "v1"}, {ID: "c", Version: "v2", Invalid: true}}},
		{"a held edit without a version or twice", `{"refused":[],"held":[{"id":"a"},{"id":"c","version":"v1"},{"id":"c","version":"v2"}]}`,
			nil, heldEdits{{ID: "c", Version: "v2"}}},
		{"junk", `{"refused":`, nil, nil},
		{"a wrong type", `{"refused":{"id":"a"}}`, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: words{}.Model(), Dim: dim, Shared: Shared([]string{"*"})})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			if err := st.SetTeamRefusals(ctx, []byte(tc.stored)); err != nil {
				t.Fatal(err)
			}
			sy, err := New(Options{Store: st, Embedder: words{},
				Connect: func(context.Context) (*team.Store, error) { return nil, errors.New("offline") }})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range sy.Status().Refused {
				ids = append(ids, r.ID)
			}
			if !reflect.DeepEqual(ids, tc.wantRefused) || !reflect.DeepEqual(sy.held, tc.wantHeld) {
				t.Fatalf("refused %v, held %+v; want %v, %+v", ids, sy.held, tc.wantRefused, tc.wantHeld)
			}
		})
	}
}

// TestEncodeRefusalsBound: the most held edits, with the longest ids,
// still fit the store's bound.
func TestEncodeRefusalsBound(t *testing.T) {
	var v storedRefusals
	for range maxRefused {
		v.Refused = append(v.Refused, Refusal{ID: strings.Repeat("r", 128), Op: "change", Outcome: refusedChange})
	}
	for i := range 2 * maxHeld {
		v.Held.hold(heldEdit{ID: fmt.Sprintf("%0128d", i), Version: version(memory.Memory{Text: fmt.Sprint(i)}), Invalid: true})
	}
	if len(v.Held) != maxHeld || v.Held[0].ID != fmt.Sprintf("%0128d", maxHeld) {
		t.Fatalf("held %d, first %s: want the newest %d", len(v.Held), v.Held[0].ID, maxHeld)
	}
	b, err := v.encode()
	if err != nil || len(b) > store.MaxTeamRefusals {
		t.Fatalf("encode: %d bytes, %v; want at most %d", len(b), err, store.MaxTeamRefusals)
	}
	got, err := decodeRefusals(b)
	if err != nil || len(got.Refused) != maxRefused || len(got.Held) == 0 || got.Held[len(got.Held)-1] != v.Held[len(v.Held)-1] {
		t.Fatalf("decoded %d refusals, %d held (%v): want %d and the newest held edits", len(got.Refused), len(got.Held), err, maxRefused)
	}
}

// TestVersion: a write that changes what the team compares makes a new
// version; counters, times and local fields do not.
func TestVersion(t *testing.T) {
	base := memory.Memory{ID: "a", Text: "the build runs on Fridays", Kind: memory.KindFact, Type: memory.TypeProject, Project: "shop", Importance: 0.5}
	for _, tc := range []struct {
		name string
		edit func(*memory.Memory)
		same bool
	}{
		{"an access", func(m *memory.Memory) { m.AccessCount++; m.LastAccessed = m.LastAccessed.AddDate(0, 0, 1) }, true},
		{"a pin", func(m *memory.Memory) { m.Pinned = true }, true},
		{"an update time", func(m *memory.Memory) { m.UpdatedAt = m.UpdatedAt.AddDate(1, 0, 0) }, true},
		{"the text", func(m *memory.Memory) { m.Text += "!" }, false},
		{"the importance", func(m *memory.Memory) { m.Importance = 0.4 }, false},
		{"the project", func(m *memory.Memory) { m.Project = "" }, false},
		{"the type", func(m *memory.Memory) { m.Type = memory.TypeUser }, false},
		{"what it supersedes", func(m *memory.Memory) { m.Supersedes = "b" }, false},
	} {
		m := base
		tc.edit(&m)
		if got := version(m) == version(base); got != tc.same {
			t.Errorf("%s: same version %v, want %v", tc.name, got, tc.same)
		}
	}
}

// FuzzDecodeRefusals: any stored value decodes or fails cleanly, within
// the bounds, and what decodes encodes back to itself.
func FuzzDecodeRefusals(f *testing.F) {
	for _, s := range []string{``, `[]`, `[{"id":"a","op":"change"}]`, `{"refused":[{"id":"a"}],"held":[{"id":"a","version":"v"}]}`,
		`{"held":[{"id":"a","version":"v"},{"id":"a","version":"w","invalid":true}]}`, `{"refused":null}`, ` [`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decodeRefusals(b)
		if err != nil {
			return
		}
		if len(v.Refused) > maxRefused || len(v.Held) > maxHeld {
			t.Fatalf("decoded %d refusals and %d held edits", len(v.Refused), len(v.Held))
		}
		enc, err := v.encode()
		if err != nil {
			return // too large for the store: the push would fail, not corrupt
		}
		w, err := decodeRefusals(enc)
		if err != nil || !reflect.DeepEqual(w.Held, v.Held) || len(w.Refused) != len(v.Refused) {
			t.Fatalf("re-decoded %+v (%v), want %+v", w, err, v)
		}
	})
}
