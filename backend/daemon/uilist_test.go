package daemon

import (
	"cmp"
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// listByIterate is List as it was before store.List: it decodes every
// record with store.Iterate and sorts what matched. It is the reference
// TestListMatchesIterate holds List to, and BenchmarkListPage's baseline.
func (d *Daemon) listByIterate(ctx context.Context, req httpapi.ListRequest) (httpapi.ListResponse, error) {
	return d.listOver(ctx, req, d.iterated)
}

// iterated is every record f selects, decoded by store.Iterate, without
// its vector.
func (d *Daemon) iterated(ctx context.Context, f store.Filter) ([]memory.Memory, error) {
	var all []memory.Memory
	err := d.store.Iterate(ctx, f, func(m memory.Memory) error {
		m.Embedding = nil
		all = append(all, m)
		return nil
	})
	return all, err
}

// iteratedOnce is iterated, each filter's records decoded once and kept:
// for a store that does not change while it is used. Safe for concurrent
// use; the slices it returns are shared and must not be changed.
func (d *Daemon) iteratedOnce() func(context.Context, store.Filter) ([]memory.Memory, error) {
	type result struct {
		ms  []memory.Memory
		err error
	}
	var mu sync.Mutex
	seen := map[string]func() result{}
	return func(ctx context.Context, f store.Filter) ([]memory.Memory, error) {
		key := fmt.Sprintf("%#v", f)
		mu.Lock()
		get, ok := seen[key]
		if !ok {
			get = sync.OnceValue(func() result {
				ms, err := d.iterated(ctx, f)
				return result{ms, err}
			})
			seen[key] = get
		}
		mu.Unlock()
		r := get()
		return r.ms, r.err
	}
}

// listOver is listByIterate over the records iterate gives for a filter.
func (d *Daemon) listOver(ctx context.Context, req httpapi.ListRequest, iterate func(context.Context, store.Filter) ([]memory.Memory, error)) (httpapi.ListResponse, error) {
	if err := req.Validate(); err != nil {
		return httpapi.ListResponse{}, err
	}
	f := store.Filter{Project: req.Project, IncludeSnoozed: req.Snoozed != "exclude", IncludeSuperseded: req.Superseded == "include"}
	if req.Kind != "" {
		if !memory.Kind(req.Kind).Valid() {
			return httpapi.ListResponse{}, &httpapi.FieldErrors{Message: "invalid list request",
				Fields: map[string]string{"kind": fmt.Sprintf("unknown kind %q", req.Kind)}}
		}
		f.Kinds = []memory.Kind{memory.Kind(req.Kind)}
	}
	now := d.clock.Now()
	q := strings.ToLower(req.Q)
	records, err := iterate(ctx, f)
	if err != nil {
		return httpapi.ListResponse{}, err
	}
	var all []memory.Memory
	for _, m := range records {
		if req.Snoozed == "only" && !m.Snoozed(now) {
			continue
		}
		if q != "" && !strings.Contains(strings.ToLower(m.Text), q) {
			continue
		}
		all = append(all, m)
	}
	key := listKey(req.Sort, d.cfg.Steward)
	desc := req.Order != "asc"
	order := make([]int32, len(all))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		a, b := &all[i], &all[j]
		c := key(a, b)
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		if desc {
			return -c
		}
		return c
	})
	if req.Limit <= 0 {
		req.Limit = 50
	}
	res := httpapi.ListResponse{Total: len(all), Memories: []httpapi.ListedMemory{}}
	if req.Offset < len(all) {
		for _, i := range order[req.Offset:min(len(all), req.Offset+req.Limit)] {
			res.Memories = append(res.Memories, d.memories.Listed(all[i], now))
		}
	}
	return res, nil
}

// listKey compares two memories by a ListSorts key, ascending.
func listKey(sort string, cfg config.Steward) func(a, b *memory.Memory) int {
	switch sort {
	case "updated":
		return func(a, b *memory.Memory) int { return a.UpdatedAt.Compare(b.UpdatedAt) }
	case "importance":
		return func(a, b *memory.Memory) int { return cmp.Compare(a.Importance, b.Importance) }
	case "access":
		return func(a, b *memory.Memory) int { return cmp.Compare(a.AccessCount, b.AccessCount) }
	case "reinforced":
		return func(a, b *memory.Memory) int { return cmp.Compare(a.ReinforcedCount, b.ReinforcedCount) }
	case "stickiness":
		return func(a, b *memory.Memory) int {
			return cmp.Compare(steward.Stickiness(a, cfg), steward.Stickiness(b, cfg))
		}
	case "last_used":
		return func(a, b *memory.Memory) int { return a.LastAccessed.Compare(b.LastAccessed) }
	case "kind":
		return func(a, b *memory.Memory) int { return strings.Compare(string(a.Kind), string(b.Kind)) }
	case "project":
		return func(a, b *memory.Memory) int { return strings.Compare(a.Project, b.Project) }
	}
	return func(a, b *memory.Memory) int { return a.CreatedAt.Compare(b.CreatedAt) }
}

// TestListMatchesIterate holds List (store.List + GetMany) to the
// Iterate-based implementation it replaced, answer for answer, on random
// requests over memories that were snoozed, reinforced, accessed, pinned,
// edited (superseded), deleted and re-projected.
func TestListMatchesIterate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &tickClock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	d, err := Open(ctx, Options{Config: testConfig(t), Version: "test", Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	fillStore(t, d, 600)
	r := rand.New(rand.NewSource(7))
	page, err := d.listByIterate(ctx, httpapi.ListRequest{Limit: 600})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range page.Memories {
		switch i % 9 {
		case 0:
			_, err = d.Feedback().Snooze(ctx, m.ID, float64(1+i%3))
		case 1:
			_, err = d.Feedback().Reinforce(ctx, m.ID)
		case 2:
			_, err = d.Feedback().Pin(ctx, m.ID, true)
		case 3:
			text := fmt.Sprintf("Edited MEMORY %d about Service %d", i, i%4)
			_, err = d.Memories().Edit(ctx, m.ID, httpapi.MemoryPatch{Text: &text})
		case 4:
			err = d.Memories().Delete(ctx, m.ID)
		case 5:
			p, imp := "p9", float64(i%7)/7
			_, err = d.Memories().Edit(ctx, m.ID, httpapi.MemoryPatch{Project: &p, Importance: &imp})
		case 6:
			_, err = d.store.Update(ctx, m.ID, func(m *memory.Memory) error {
				m.AccessCount += r.Intn(20)
				m.LastAccessed = d.clock.Now().Add(-time.Duration(r.Intn(30)) * 24 * time.Hour)
				return nil
			})
		}
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	clk.freeze(true) // both lists see the same now (ages, snoozes)
	sorts := append([]string{""}, httpapi.ListSorts...)
	reqs := make([]httpapi.ListRequest, 400)
	for i := range reqs {
		req := httpapi.ListRequest{
			Sort:       sorts[r.Intn(len(sorts))],
			Order:      []string{"", "asc", "desc"}[r.Intn(3)],
			Snoozed:    []string{"", "include", "only", "exclude"}[r.Intn(4)],
			Superseded: []string{"", "include", "exclude"}[r.Intn(3)],
			Limit:      []int{0, 1, 7, 50, 1000}[r.Intn(5)],
			Offset:     []int{0, 0, 3, 49, 100, 599, 5000}[r.Intn(7)],
		}
		if r.Intn(3) == 0 {
			req.Project = fmt.Sprintf("p%d", []int{0, 1, 9, 42}[r.Intn(4)])
		}
		if r.Intn(3) == 0 {
			req.Kind = string(memory.Kinds[r.Intn(len(memory.Kinds))])
		}
		if r.Intn(3) == 0 {
			req.Q = []string{"service 1", "EDITED", "memory 1", "Ö", "slots."}[r.Intn(5)]
		}
		reqs[i] = req
	}
	// The store does not change from here on: the reference decodes each
	// filter's records once, and the requests are checked side by side.
	iterate := d.iteratedOnce()
	check := func(req httpapi.ListRequest) error {
		got, err := d.Memories().List(ctx, req)
		if err != nil {
			return fmt.Errorf("List(%+v): %v", req, err)
		}
		want, err := d.listOver(ctx, req, iterate)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, want) {
			for j := range min(len(got.Memories), len(want.Memories)) {
				if !reflect.DeepEqual(got.Memories[j], want.Memories[j]) {
					t.Errorf("item %d: got %+v\nwant %+v", j, got.Memories[j], want.Memories[j])
					break
				}
			}
			return fmt.Errorf("List(%+v): total %d, %d memories; the Iterate-based list: total %d, %d memories",
				req, got.Total, len(got.Memories), want.Total, len(want.Memories))
		}
		return nil
	}
	next := make(chan httpapi.ListRequest)
	var wg sync.WaitGroup
	var failed sync.Once
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for req := range next {
				if err := check(req); err != nil {
					failed.Do(func() { t.Error(err) })
				}
			}
		})
	}
	for _, req := range reqs {
		next <- req
	}
	close(next)
	wg.Wait()
}

// tickClock advances a millisecond at each reading unless frozen.
type tickClock struct {
	mu     sync.Mutex
	t      time.Time
	frozen bool
}

func (c *tickClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.frozen {
		c.t = c.t.Add(time.Millisecond)
	}
	return c.t
}

func (c *tickClock) freeze(f bool) {
	c.mu.Lock()
	c.frozen = f
	c.mu.Unlock()
}
