package importer_test

import (
	"context"
	"testing"

	"github.com/memtray/memtray/backend/importer"
)

// TestServiceHomeDefault: an empty Home is the user's home ($HOME), and a
// dry run through the service writes nothing.
func TestServiceHomeDefault(t *testing.T) {
	home, _ := fixture(t)
	t.Setenv("HOME", home)
	d := openDaemon(t)
	svc := importer.NewService(importer.Options{Store: d.Store(), Pipeline: d.Pipeline()}, nil)
	for _, c := range []struct {
		name   string
		dryRun bool
		stored bool
	}{
		{"dry run", true, false},
		{"run", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := svc.ImportClaude(context.Background(), importer.Request{DryRun: c.dryRun})
			if err != nil {
				t.Fatalf("ImportClaude: %v", err)
			}
			if rep.Home != home || rep.DryRun != c.dryRun || len(rep.Files) == 0 {
				t.Fatalf("report: home %q (want %q), dry run %v, %d files", rep.Home, home, rep.DryRun, len(rep.Files))
			}
			if got := d.Store().Count() > 0; got != c.stored {
				t.Fatalf("stored = %v, want %v", got, c.stored)
			}
		})
	}
}
