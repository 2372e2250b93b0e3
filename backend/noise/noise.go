// Package noise is the write pipeline's adaptive content scorer (its content
// gate; see docs/architecture.md, "A turn written"). A text's score is
//
//	quality / (quality + noise)
//
// where quality is its mean cosine similarity to a fixed set of quality
// prototypes (descriptions of knowledge worth keeping) and noise the mean of
// its three highest similarities to the noise prototypes: a static set plus
// the newest texts of a rejection ring buffer (a JSONL file). The buffer
// learns only from verdicts made outside the gate (a judge's SKIP, a user
// marking a memory as noise), never from the gate's own rejections, which
// would feed on themselves; a user "keep" takes a text back out. Every
// RebuildEvery new entries the learned prototypes are re-embedded from the
// newest Recent entries and swapped in without stopping scoring.
package noise

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// TopK is how many of the most similar noise prototypes the score averages:
// averaging all of them converges to a constant as the buffer grows.
const TopK = 3

// Options configures a Scorer. Zero fields take the defaults in parentheses.
type Options struct {
	// Embedder embeds prototypes and scored texts; required.
	Embedder memory.Embedder
	// BufferPath is the JSONL ring buffer file; "" keeps the buffer in memory only.
	BufferPath string
	// BufferSize is the ring buffer's capacity (500).
	BufferSize int
	// Recent is how many of the newest buffer entries become noise prototypes (150).
	Recent int
	// RebuildEvery is how many new entries trigger a rebuild (25).
	RebuildEvery int
	// Threshold is the score below which the gate rejects (0.35).
	Threshold float64
	// Quality and Noise replace the static prototypes (tests); nil keeps the defaults.
	Quality, Noise []string
	// Clock stamps buffer entries; nil is the wall clock.
	Clock memory.Clock
}

func (o *Options) defaults() {
	if o.BufferSize <= 0 {
		o.BufferSize = 500
	}
	if o.Recent <= 0 {
		o.Recent = 150
	}
	if o.Recent > o.BufferSize {
		o.Recent = o.BufferSize
	}
	if o.RebuildEvery <= 0 {
		o.RebuildEvery = 25
	}
	if o.Threshold == 0 {
		o.Threshold = 0.35
	}
	if o.Quality == nil {
		o.Quality = QualityPrototypes
	}
	if o.Noise == nil {
		o.Noise = NoisePrototypes
	}
	if o.Clock == nil {
		o.Clock = memory.SystemClock{}
	}
}

// Score is one text's content score and its parts.
type Score struct {
	// Value is Quality / (Quality + Noise), in 0..1; 0.5 when both are 0.
	Value float64 `json:"value"`
	// Quality is the mean cosine similarity to the quality prototypes.
	Quality float64 `json:"quality"`
	// Noise is the mean of the TopK highest similarities to noise prototypes.
	Noise float64 `json:"noise"`
	// Nearest describes the most similar noise prototype.
	Nearest string `json:"nearest,omitempty"`
	// Pass reports Value >= the threshold.
	Pass bool `json:"pass"`
}

// model is one immutable generation of prototypes, swapped as a whole.
type model struct {
	quality [][]float32
	noise   [][]float32
	labels  []string // one per noise prototype: "static: <text>" or "learned: <text>"
	learned int
	builtAt time.Time
}

// Scorer scores texts against quality and noise prototypes and keeps the
// rejection buffer. It is safe for concurrent use.
type Scorer struct {
	opts             Options
	cur              atomic.Pointer[model]
	buf              *Buffer
	staticQ, staticN [][]float32

	mu        sync.Mutex // serialises buffer changes and rebuilds
	sinceLast int
	rebuilds  int
	lastErr   string

	smu    sync.Mutex
	recent []float64 // newest scores, at most recentScores
}

// recentScores bounds the score history State reports.
const recentScores = 200

// New embeds the prototypes, opens the buffer and builds the first model.
// A buffer file that cannot be parsed is an error naming the line; a
// missing one starts empty.
func New(ctx context.Context, opts Options) (*Scorer, error) {
	if opts.Embedder == nil {
		return nil, errors.New("noise: no embedder")
	}
	opts.defaults()
	if len(opts.Quality) == 0 {
		return nil, errors.New("noise: no quality prototypes")
	}
	buf, err := OpenBuffer(opts.BufferPath, opts.BufferSize)
	if err != nil {
		return nil, err
	}
	s := &Scorer{opts: opts, buf: buf}
	if s.staticQ, err = s.embed(ctx, opts.Quality); err != nil {
		return nil, fmt.Errorf("noise: embed quality prototypes: %w", err)
	}
	if s.staticN, err = s.embed(ctx, opts.Noise); err != nil {
		return nil, fmt.Errorf("noise: embed noise prototypes: %w", err)
	}
	if err := s.rebuild(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Scorer) embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vecs, err := s.opts.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs, nil
}

// rebuild embeds the newest Recent buffer entries and swaps the model.
func (s *Scorer) rebuild(ctx context.Context) error {
	entries := s.buf.Newest(s.opts.Recent)
	texts := make([]string, len(entries))
	for i, e := range entries {
		texts[i] = e.Text
	}
	learned, err := s.embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("noise: embed learned prototypes: %w", err)
	}
	m := &model{quality: s.staticQ, learned: len(learned), builtAt: s.opts.Clock.Now()}
	m.noise = append(slices.Clip(s.staticN), learned...)
	for _, t := range s.opts.Noise {
		m.labels = append(m.labels, "static: "+preview(t))
	}
	for _, t := range texts {
		m.labels = append(m.labels, "learned: "+preview(t))
	}
	s.cur.Store(m)
	return nil
}

// Threshold is the gate's threshold.
func (s *Scorer) Threshold() float64 { return s.opts.Threshold }

// ScoreVector scores an already embedded text (a vector of the scorer's
// embedder) and records the score for State.
func (s *Scorer) ScoreVector(vec []float32) Score {
	m := s.cur.Load()
	var sc Score
	for _, q := range m.quality {
		sc.Quality += memory.Cosine(vec, q)
	}
	sc.Quality /= float64(len(m.quality))
	var top [TopK]float64
	var topIdx [TopK]int
	n := 0
	for i, v := range m.noise {
		c := memory.Cosine(vec, v)
		if n < TopK {
			top[n], topIdx[n] = c, i
			n++
			continue
		}
		low := 0
		for j := 1; j < TopK; j++ {
			if top[j] < top[low] {
				low = j
			}
		}
		if c > top[low] {
			top[low], topIdx[low] = c, i
		}
	}
	best := -1
	for j := 0; j < n; j++ {
		sc.Noise += top[j]
		if best < 0 || top[j] > top[best] {
			best = j
		}
	}
	if n > 0 {
		sc.Noise /= float64(n)
		sc.Nearest = m.labels[topIdx[best]]
	}
	// Cosines can be negative; the ratio is defined on the positive parts.
	q, no := math.Max(sc.Quality, 0), math.Max(sc.Noise, 0)
	if q+no == 0 {
		sc.Value = 0.5
	} else {
		sc.Value = q / (q + no)
	}
	sc.Pass = sc.Value >= s.opts.Threshold
	s.smu.Lock()
	if len(s.recent) == recentScores {
		copy(s.recent, s.recent[1:])
		s.recent = s.recent[:recentScores-1]
	}
	s.recent = append(s.recent, sc.Value)
	s.smu.Unlock()
	return sc
}

// Learn adds a text judged noise from outside the gate (source "judge" or
// "user") to the buffer, and rebuilds the learned prototypes every
// RebuildEvery additions. The gate's own rejections must not be passed here.
func (s *Scorer) Learn(ctx context.Context, text, source string) error {
	if source != SourceJudge && source != SourceUser {
		return fmt.Errorf("noise: learn from %q: only judge and user verdicts train the scorer", source)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.buf.Add(Entry{At: s.opts.Clock.Now().UTC(), Source: source, Text: text}); err != nil {
		return err
	}
	s.sinceLast++
	if s.sinceLast < s.opts.RebuildEvery {
		return nil
	}
	s.sinceLast = 0
	if err := s.rebuild(ctx); err != nil {
		s.lastErr = err.Error()
		return err
	}
	s.rebuilds++
	return nil
}

// Forget removes a text from the buffer (a user said it was worth keeping)
// and rebuilds at once if it was among the learned prototypes. It reports
// whether the text was in the buffer.
func (s *Scorer) Forget(ctx context.Context, text string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	removed, err := s.buf.Remove(text)
	if err != nil || !removed {
		return removed, err
	}
	if err := s.rebuild(ctx); err != nil {
		s.lastErr = err.Error()
		return true, err
	}
	s.rebuilds++
	return true, nil
}

// Rebuild re-embeds the learned prototypes now (after a model change).
func (s *Scorer) Rebuild(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sinceLast = 0
	return s.rebuild(ctx)
}

// State is what the UI shows of the scorer.
type State struct {
	Threshold         float64   `json:"threshold"`
	QualityPrototypes []string  `json:"quality_prototypes"`
	NoisePrototypes   []string  `json:"noise_prototypes"` // static, then learned (previews)
	Learned           int       `json:"learned"`
	BufferLen         int       `json:"buffer_len"`
	BufferSize        int       `json:"buffer_size"`
	Recent            int       `json:"recent"`
	RebuildEvery      int       `json:"rebuild_every"`
	UntilRebuild      int       `json:"until_rebuild"`
	Rebuilds          int       `json:"rebuilds"`
	BuiltAt           time.Time `json:"built_at"`
	RecentScores      []float64 `json:"recent_scores"`
	LastError         string    `json:"last_error,omitempty"`
}

// State returns a snapshot of the scorer for the UI.
func (s *Scorer) State() State {
	m := s.cur.Load()
	s.mu.Lock()
	st := State{
		Threshold: s.opts.Threshold, QualityPrototypes: slices.Clone(s.opts.Quality),
		NoisePrototypes: slices.Clone(m.labels), Learned: m.learned,
		BufferLen: s.buf.Len(), BufferSize: s.opts.BufferSize, Recent: s.opts.Recent,
		RebuildEvery: s.opts.RebuildEvery, UntilRebuild: s.opts.RebuildEvery - s.sinceLast,
		Rebuilds: s.rebuilds, BuiltAt: m.builtAt, LastError: s.lastErr,
	}
	s.mu.Unlock()
	s.smu.Lock()
	st.RecentScores = slices.Clone(s.recent)
	s.smu.Unlock()
	return st
}

// preview shortens a text for State.
func preview(s string) string {
	s = memory.NormalizeSpace(s)
	if len(s) <= 120 {
		return s
	}
	return truncate(s, 117) + "..."
}

// Prototypes are the current model's prototype vectors with their labels
// (for a projection). The vectors are shared with the scorer: read only.
type Prototypes struct {
	Quality       [][]float32
	QualityLabels []string
	// Noise holds the static noise prototypes, then the Learned ones.
	Noise       [][]float32
	NoiseLabels []string // "static: <text>" or "learned: <text>"
	Learned     int
}

// Prototypes returns the current model's prototype vectors.
func (s *Scorer) Prototypes() Prototypes {
	m := s.cur.Load()
	labels := make([]string, len(s.opts.Quality))
	for i, t := range s.opts.Quality {
		labels[i] = preview(t)
	}
	return Prototypes{Quality: m.quality, QualityLabels: labels, Noise: m.noise,
		NoiseLabels: slices.Clone(m.labels), Learned: m.learned}
}
