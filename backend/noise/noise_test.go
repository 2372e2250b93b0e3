package noise

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func newScorer(t *testing.T, path string, opts Options) *Scorer {
	t.Helper()
	opts.Embedder = embed.NewLexical()
	opts.BufferPath = path
	opts.Clock = memory.FixedClock{T: t0}
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestScoreFormula(t *testing.T) {
	s := newScorer(t, "", Options{
		Quality: []string{"database migration decision because of the lock table"},
		Noise:   []string{"okay running it now", "thanks glad it worked", "hello there"},
	})
	tests := []struct {
		text     string
		wantPass bool
	}{
		{"we chose the migration tool because the lock table on the database blocks deploys", true},
		{"okay, running it now", false},
		{"thanks, glad it worked!", false},
	}
	for _, tt := range tests {
		sc, err := s.ScoreText(context.Background(), tt.text)
		if err != nil {
			t.Fatal(err)
		}
		want := sc.Quality / (sc.Quality + sc.Noise)
		if d := sc.Value - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%q: value %.4f, want quality/(quality+noise) = %.4f", tt.text, sc.Value, want)
		}
		if sc.Pass != tt.wantPass {
			t.Errorf("%q: pass = %v (score %.3f, quality %.3f, noise %.3f), want %v", tt.text, sc.Pass, sc.Value, sc.Quality, sc.Noise, tt.wantPass)
		}
	}
	st := s.State()
	if len(st.RecentScores) != len(tests) || st.Threshold != 0.35 || st.BufferLen != 0 {
		t.Errorf("state: %+v", st)
	}
}

// TestTopK: the noise part averages the three nearest noise prototypes, so
// adding many unrelated prototypes does not dilute a close match.
func TestTopK(t *testing.T) {
	noiseSet := []string{"okay running the tests now", "okay running the build now", "okay running the linter now"}
	few := newScorer(t, "", Options{Quality: []string{"root cause and fix"}, Noise: noiseSet})
	var many []string
	for i := 0; i < 200; i++ {
		many = append(many, fmt.Sprintf("unrelated prototype number %d about gardening and weather", i))
	}
	lots := newScorer(t, "", Options{Quality: []string{"root cause and fix"}, Noise: append(many, noiseSet...)})
	a, _ := few.ScoreText(context.Background(), "okay running the tests now")
	b, _ := lots.ScoreText(context.Background(), "okay running the tests now")
	if d := a.Noise - b.Noise; d > 1e-9 || d < -1e-9 {
		t.Errorf("noise similarity changed with unrelated prototypes: %.4f vs %.4f", a.Noise, b.Noise)
	}
}

// TestLearnRebuildsAndPersists: every RebuildEvery judge/user entries the
// learned prototypes are rebuilt from the newest Recent; the buffer keeps
// the newest BufferSize across a restart; the gate's own rejections are refused.
func TestLearnRebuildsAndPersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "noise", "rejections.jsonl")
	s := newScorer(t, path, Options{BufferSize: 10, Recent: 4, RebuildEvery: 3})
	if err := s.Learn(ctx, "some text", "gate"); err == nil {
		t.Fatal("Learn accepted the gate's own rejection")
	}
	text := "pulling up the dashboard for the quarterly numbers now"
	before, _ := s.ScoreText(ctx, text)
	for i := 0; i < 2; i++ {
		if err := s.Learn(ctx, text, SourceJudge); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.State(); st.Learned != 0 || st.UntilRebuild != 1 || st.BufferLen != 2 {
		t.Fatalf("before the rebuild: %+v", st)
	}
	if err := s.Learn(ctx, text, SourceUser); err != nil {
		t.Fatal(err)
	}
	st := s.State()
	if st.Learned != 3 || st.Rebuilds != 1 || st.UntilRebuild != 3 {
		t.Fatalf("after the rebuild: learned %d rebuilds %d until %d", st.Learned, st.Rebuilds, st.UntilRebuild)
	}
	after, _ := s.ScoreText(ctx, text)
	if after.Value >= before.Value || !strings.HasPrefix(after.Nearest, "learned:") {
		t.Errorf("learning did not lower the score: %.3f -> %.3f (nearest %q)", before.Value, after.Value, after.Nearest)
	}
	for i := 0; i < 30; i++ {
		if err := s.Learn(ctx, fmt.Sprintf("status line %d", i), SourceJudge); err != nil {
			t.Fatal(err)
		}
	}
	if s.State().BufferLen != 10 || s.State().Learned != 4 {
		t.Errorf("ring buffer: %+v", s.State())
	}
	// A restart reads the newest 10 back and builds from the newest 4.
	s2 := newScorer(t, path, Options{BufferSize: 10, Recent: 4, RebuildEvery: 3})
	if st := s2.State(); st.BufferLen != 10 || st.Learned != 4 || !strings.Contains(strings.Join(st.NoisePrototypes, "|"), "status line 29") {
		t.Errorf("after restart: len %d learned %d", st.BufferLen, st.Learned)
	}
	// The file was compacted: it never holds more than twice the capacity.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 20 {
		t.Errorf("buffer file has %d lines, want at most 20", n)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("buffer file mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestForget: a user "keep" removes the text from the buffer and the model at once.
func TestForget(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rejections.jsonl")
	s := newScorer(t, path, Options{BufferSize: 10, Recent: 10, RebuildEvery: 1})
	keep := "the staging database is restored from the nightly snapshot at 02:00 UTC"
	if err := s.Learn(ctx, keep, SourceJudge); err != nil {
		t.Fatal(err)
	}
	if err := s.Learn(ctx, "okay done", SourceJudge); err != nil {
		t.Fatal(err)
	}
	ok, err := s.Forget(ctx, "  the staging database is restored from the nightly snapshot at 02:00 UTC\n")
	if err != nil || !ok {
		t.Fatalf("forget: %v %v", ok, err)
	}
	if st := s.State(); st.BufferLen != 1 || st.Learned != 1 {
		t.Errorf("after forget: %+v", st)
	}
	if ok, _ := s.Forget(ctx, "never buffered"); ok {
		t.Error("forgot a text that was not buffered")
	}
	s2 := newScorer(t, path, Options{BufferSize: 10, Recent: 10})
	if s2.State().BufferLen != 1 {
		t.Errorf("forget not persisted: %d entries", s2.State().BufferLen)
	}
}

// TestBadBufferFile: a damaged buffer is an error naming the line and is left as it is.
func TestBadBufferFile(t *testing.T) {
	for name, content := range map[string]string{
		"not json":    "{\"at\":\"2025-01-01T00:00:00Z\",\"source\":\"judge\",\"text\":\"ok\"}\n{oops\n",
		"bad source":  "{\"source\":\"gate\",\"text\":\"ok\"}\n",
		"empty text":  "{\"source\":\"judge\",\"text\":\"  \"}\n",
		"invalid utf": "{\"source\":\"judge\",\"text\":\"\\u0000\"}\n",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rejections.jsonl")
			os.WriteFile(path, []byte(content), 0o600)
			_, err := New(context.Background(), Options{Embedder: embed.NewLexical(), BufferPath: path})
			if err == nil || !strings.Contains(err.Error(), "line") {
				t.Errorf("err = %v, want one naming the line", err)
			}
			if got, _ := os.ReadFile(path); string(got) != content {
				t.Error("the damaged file was changed")
			}
		})
	}
}

func TestConcurrentScoreAndLearn(t *testing.T) {
	ctx := context.Background()
	s := newScorer(t, filepath.Join(t.TempDir(), "r.jsonl"), Options{BufferSize: 50, Recent: 20, RebuildEvery: 5})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if g%2 == 0 {
					s.Learn(ctx, fmt.Sprintf("noise %d %d", g, i), SourceJudge)
				} else {
					s.ScoreText(ctx, "some reply about the deploy pipeline")
					_ = s.State()
				}
			}
		}(g)
	}
	wg.Wait()
	if st := s.State(); st.BufferLen != 50 || st.Rebuilds != 10 {
		t.Errorf("after concurrent use: len %d rebuilds %d", st.BufferLen, st.Rebuilds)
	}
}

func FuzzParseBuffer(f *testing.F) {
	f.Add([]byte("{\"at\":\"2025-01-01T00:00:00Z\",\"source\":\"judge\",\"text\":\"ok\"}\n"))
	f.Add([]byte("\n\n{\"source\":\"user\",\"text\":\"x\"}"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseBuffer(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.validate() != nil {
				t.Fatalf("parsed an invalid entry: %+v", e)
			}
		}
	})
}

// TestUnfinishedLastLine: an append cut short (a kill, a full disk) leaves
// a last line with no newline; it is dropped, not taken for damage, and
// the next append starts on a line of its own. A whole last entry without
// its newline is kept. A rewrite cut short leaves a temporary file, removed.
func TestUnfinishedLastLine(t *testing.T) {
	ctx := context.Background()
	whole := `{"at":"2025-01-01T00:00:00Z","source":"judge","text":"the tests are running, please wait"}` + "\n"
	for name, c := range map[string]struct {
		content string
		entries int
	}{
		"cut in the middle": {whole + `{"at":"2025-01-02T00:00:00Z","source":"judge","te`, 1},
		"cut before its }":  {whole + `{"at":"2025-01-02T00:00:00Z","source":"judge","text":"done"`, 1},
		"whole, no newline": {whole + `{"at":"2025-01-02T00:00:00Z","source":"user","text":"ok thanks"}`, 2},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rejections.jsonl")
			os.WriteFile(path, []byte(c.content), 0o600)
			tmp := filepath.Join(filepath.Dir(path), ".rejections-123.tmp") // a rewrite cut short
			os.WriteFile(tmp, []byte(whole), 0o600)
			s := newScorer(t, path, Options{BufferSize: 10, Recent: 10})
			if n := s.State().BufferLen; n != c.entries {
				t.Fatalf("%d entries, want %d", n, c.entries)
			}
			if _, err := os.Stat(tmp); !os.IsNotExist(err) {
				t.Errorf("the temporary file of a cut rewrite is left (%v)", err)
			}
			if err := s.Learn(ctx, "sure, I will do that now", SourceJudge); err != nil {
				t.Fatal(err)
			}
			s2 := newScorer(t, path, Options{BufferSize: 10, Recent: 10})
			if n := s2.State().BufferLen; n != c.entries+1 {
				data, _ := os.ReadFile(path)
				t.Errorf("after an append: %d entries, want %d:\n%s", n, c.entries+1, data)
			}
		})
	}
}
