package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestClosersReverseOrder(t *testing.T) {
	t.Parallel()
	errA, errC := errors.New("a failed"), errors.New("c failed")
	tests := []struct {
		name    string
		results []error // what each pushed release returns, in push order
		want    []int   // the order the releases run
		errs    []error // what close's error wraps
	}{
		{name: "none", want: nil},
		{name: "one", results: []error{nil}, want: []int{0}},
		{name: "reverse", results: []error{nil, nil, nil}, want: []int{2, 1, 0}},
		{name: "a failure does not stop the rest", results: []error{errA, nil, errC}, want: []int{2, 1, 0}, errs: []error{errA, errC}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c closers
			var ran []int
			for i, res := range tt.results {
				c.push(func() error { ran = append(ran, i); return res })
			}
			err := c.close()
			if !reflect.DeepEqual(ran, tt.want) {
				t.Errorf("ran %v, want %v", ran, tt.want)
			}
			for _, e := range tt.errs {
				if !errors.Is(err, e) {
					t.Errorf("close: %v; want it to wrap %v", err, e)
				}
			}
			if len(tt.errs) == 0 && err != nil {
				t.Errorf("close: %v", err)
			}
			ran = nil
			if err := c.close(); err != nil || len(ran) != 0 {
				t.Errorf("second close ran %v, %v; want nothing", ran, err)
			}
		})
	}
}

// An Open that fails after the store is open releases it: the next Open
// of the data dir finds it unlocked.
func TestOpenFailureReleases(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Capture.Transcripts.Enabled = true
	// A file where the transcripts folder goes: the last step of Open fails.
	blocker := filepath.Join(cfg.DataDir, TranscriptsDir)
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if d, err := Open(context.Background(), Options{Config: cfg}); err == nil {
		d.Close()
		t.Fatal("Open succeeded with a file where the transcripts folder goes")
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	d, err := Open(context.Background(), Options{Config: cfg})
	if err != nil {
		t.Fatalf("Open after a failed Open: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
