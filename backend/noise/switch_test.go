package noise

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memtray/memtray/backend/embed"
)

// TestPrepareInstall: prototypes prepared with another model (another
// dimension) replace the scorer's at Install, learned ones included, and
// scores of that model's vectors make sense at once.
func TestPrepareInstall(t *testing.T) {
	ctx := context.Background()
	sw := embed.NewSwappable(embed.NewLexical())
	s, err := New(ctx, Options{Embedder: sw, BufferPath: filepath.Join(t.TempDir(), "buf.jsonl"),
		Quality: []string{"database migration decision because of the lock table"},
		Noise:   []string{"okay running it now", "thanks glad it worked"}, RebuildEvery: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Learn(ctx, "sure, I will look into that for you", SourceUser); err != nil {
		t.Fatal(err)
	}
	next := embed.NewBuiltin()
	p, err := s.Prepare(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if p.Model() != next.Model() {
		t.Fatalf("prepared model %q", p.Model())
	}
	if d := len(s.Prototypes().Quality[0]); d != embed.LexicalDim {
		t.Fatalf("Prepare changed the scorer: dimension %d", d)
	}
	sw.Swap(next)
	s.Install(p)
	pr := s.Prototypes()
	if len(pr.Quality[0]) != next.Dim() || len(pr.Noise) != 3 || pr.Learned != 1 || len(pr.Noise[2]) != next.Dim() {
		t.Fatalf("after Install: %d quality dims, %d noise prototypes (%d learned)", len(pr.Quality[0]), len(pr.Noise), pr.Learned)
	}
	sc, err := s.ScoreText(ctx, "okay, running it now")
	if err != nil {
		t.Fatal(err)
	}
	if sc.Nearest != "static: okay running it now" || sc.Pass {
		t.Fatalf("a noise text under the new model: %+v", sc)
	}
	if err := s.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if pr := s.Prototypes(); len(pr.Quality[0]) != next.Dim() || len(pr.Noise[2]) != next.Dim() {
		t.Fatal("a rebuild after Install went back to the old model's prototypes")
	}
}
