package memories

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// event is one change the service announced.
type event struct {
	op  string
	ids []string
}

// open returns the service over a real store with the built-in embedder,
// and the events it publishes.
func open(t *testing.T) (*Service, *[]event) {
	t.Helper()
	ctx := context.Background()
	clock := memory.FixedClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	emb := embed.NewSwappable(embed.NewBuiltin())
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := config.Default()
	p, err := ingest.New(ingest.Options{Config: cfg.Ingest, Embedder: emb, Store: st, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	var evs []event
	s, err := New(Options{Store: st, Pipeline: p, Search: search.New(st, emb, cfg.Search, clock), Embedder: emb,
		Steward: cfg.Steward, Clock: clock,
		Publish: func(op string, ids []string, _ *memory.Memory) { evs = append(evs, event{op, slices.Clone(ids)}) }})
	if err != nil {
		t.Fatal(err)
	}
	return s, &evs
}

func TestNewNeedsParts(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a store: no error")
	}
}

func TestListRequestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   ListRequest
		field string // "" valid
	}{
		{"empty", ListRequest{}, ""},
		{"every sort", ListRequest{Sort: "stickiness", Order: "asc", Snoozed: "only", Q: "retry"}, ""},
		{"bad sort", ListRequest{Sort: "size"}, "sort"},
		{"bad order", ListRequest{Order: "up"}, "order"},
		{"bad snoozed", ListRequest{Snoozed: "never"}, "snoozed"},
		{"long q", ListRequest{Q: strings.Repeat("x", MaxListQuery+1)}, "q"},
		{"invalid utf-8 q", ListRequest{Q: "\xff"}, "q"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.Validate()
			var fe *memory.FieldErrors
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("Validate = %v, want nil", err)
			case tc.field != "" && (!errors.As(err, &fe) || fe.Fields[tc.field] == ""):
				t.Fatalf("Validate = %v, want a problem with %s", err, tc.field)
			}
		})
	}
}

// TestAddEditHistoryDelete: an added memory is announced and found; a new
// text makes a new version whose history holds both; a delete is announced.
func TestAddEditHistoryDelete(t *testing.T) {
	ctx := context.Background()
	s, evs := open(t)
	m, err := s.Add(ctx, AddRequest{Text: "The payment gateway retries failed charges three times.", Kind: "fact", Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, m.ID); err != nil || got.Text != m.Text {
		t.Fatalf("Get = %q, %v", got.Text, err)
	}
	page, err := s.List(ctx, ListRequest{Project: "shop"})
	if err != nil || page.Total != 1 || page.Memories[0].ID != m.ID || page.Memories[0].Embedding != nil {
		t.Fatalf("List = %+v, %v", page, err)
	}
	text := "The payment gateway retries failed charges five times."
	res, err := s.Edit(ctx, m.ID, MemoryPatch{Text: &text})
	if err != nil {
		t.Fatal(err)
	}
	if res.Previous != m.ID || res.Memory.ID == m.ID || res.Memory.Text != text {
		t.Fatalf("Edit = %+v", res)
	}
	h, err := s.History(ctx, res.Memory.ID)
	if err != nil || len(h.Versions) != 2 || h.Versions[0].ID != m.ID || h.Versions[1].ID != res.Memory.ID {
		t.Fatalf("History = %+v, %v", h, err)
	}
	if err := s.Delete(ctx, res.Memory.ID); err != nil {
		t.Fatal(err)
	}
	want := []event{{OpAdded, []string{m.ID}}, {OpUpdated, []string{m.ID, res.Memory.ID}}, {OpDeleted, []string{res.Memory.ID}}}
	if !slices.EqualFunc(*evs, want, func(a, b event) bool { return a.op == b.op && slices.Equal(a.ids, b.ids) }) {
		t.Fatalf("events = %v, want %v", *evs, want)
	}
	if _, err := s.Edit(ctx, m.ID, MemoryPatch{}); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("empty patch: %v, want invalid", err)
	}
}

func TestIngestDocumentTooLarge(t *testing.T) {
	s, _ := open(t)
	if _, err := s.IngestDocument(context.Background(), "big", "", strings.Repeat("a", MaxDocumentBytes+1)); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("IngestDocument = %v, want invalid", err)
	}
}
