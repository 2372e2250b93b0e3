// Package feed is the feed service: the write pipeline's decisions as
// people see and correct them. It ingests exchanges and documents, keeps
// the recent-decisions log, stores a rejected exchange a user keeps,
// teaches the noise model a memory a user marks as noise, describes the
// content scorer and the judge, previews another content threshold over
// the recent decisions, and projects the scorer's prototypes and the
// recent exchanges for the UI.
package feed

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/judge"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
	"github.com/memtray/memtray/backend/redact"
	"github.com/memtray/memtray/backend/store"
)

// Options configures New. Store, Pipeline, Embedder, Log and Trash are
// required.
type Options struct {
	Store    *store.Store
	Pipeline *ingest.Pipeline
	// Judge is the pipeline's judge (nil when off).
	Judge memory.Judge
	// Embedder embeds the recent exchanges of a projection.
	Embedder memory.Embedder
	// Log is the recent-decisions log; LogSize is its size (what a
	// threshold preview replays).
	Log     *DecisionLog
	LogSize int
	// Threshold is the configured content threshold, used while the
	// scorer is off (nil: 0).
	Threshold func() float64
	// IndexLag turns "stored, but the text index lags" into success (nil:
	// errors are returned).
	IndexLag func(error) error
	// Trash moves a memory to the trash with a reason and announces it
	// (memories.Service.Trash, which a delete uses too); MarkNoise calls
	// it with NoiseReason.
	Trash func(ctx context.Context, id, reason string) error
}

// Service is the feed service.
type Service struct {
	o Options
}

// New returns the service over o.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Pipeline == nil || o.Embedder == nil || o.Log == nil || o.Trash == nil {
		return nil, errors.New("feed: store, pipeline, embedder, decision log and trash are required")
	}
	if o.Threshold == nil {
		o.Threshold = func() float64 { return 0 }
	}
	if o.IndexLag == nil {
		o.IndexLag = func(err error) error { return err }
	}
	return &Service{o: o}, nil
}

// Ingest runs exchanges through the write pipeline and stores documents,
// one Decision each, in order. An invalid exchange fails the request before
// anything is processed.
func (s *Service) Ingest(ctx context.Context, req IngestRequest) (IngestResponse, error) {
	if n := len(req.Exchanges) + len(req.Documents); n > MaxIngestItems {
		return IngestResponse{}, fmt.Errorf("%w: %d items, at most %d", memory.ErrInvalid, n, MaxIngestItems)
	}
	for i, ex := range req.Exchanges {
		if err := ingest.Validate(ex); err != nil {
			return IngestResponse{}, fmt.Errorf("exchange %d: %w", i, err)
		}
	}
	for i, doc := range req.Documents {
		if doc.Name == "" || !memory.ValidUTF8(doc.Text) || len(doc.Text) > ingest.MaxTextBytes {
			return IngestResponse{}, fmt.Errorf("document %d: %w: a name and at most 1 MiB of UTF-8 text are required", i, memory.ErrInvalid)
		}
	}
	// A session whose exchanges do not count the user's prompts is counted
	// here when the request holds its start (ingest.CountPrompts): the feed
	// and the reasons name its turns as its user counts them ("turn 3"),
	// not by exchange.
	exs := ingest.CountPrompts(req.Exchanges)
	// The exchanges of a request are all there is of their sessions (a
	// transcript is complete): a headless session is decided by the most
	// user turns it reaches in the request.
	reach := map[string]int{}
	for _, ex := range exs {
		if ex.Headless && ex.SessionID != "" {
			reach[ex.SessionID] = max(reach[ex.SessionID], ex.UserTurns)
		}
	}
	// The unit of knowledge is the user turn: a request's exchanges are cut
	// into turns, and each turn is distilled knowing what its session said
	// after it (a statement a later turn corrects is not stored).
	var resp IngestResponse
	turns := ingest.GroupTurns(exs)
	later := ingest.NewLater(turns) // each turn read once for the turns before it
	revs := ingest.NewRevisions()   // each revising sentence read once for the turns before it
	for i, t := range turns {
		dec, _, err := s.o.Pipeline.ProcessTurn(ctx, t, later.After(i, t.SessionID), ingest.SessionState{UserTurns: reach[t.SessionID], Ended: true, Revisions: revs})
		if err != nil {
			return resp, s.o.IndexLag(err)
		}
		s.o.Log.Add(dec, t.Exchange())
		resp.Decisions = append(resp.Decisions, dec)
	}
	for _, doc := range req.Documents {
		dec, err := s.o.Pipeline.Document(ctx, doc.Name, doc.Project, doc.Text)
		if err != nil {
			return resp, s.o.IndexLag(err)
		}
		s.o.Log.Add(dec, memory.Exchange{Project: doc.Project, Source: "ingest:" + doc.Name})
		resp.Decisions = append(resp.Decisions, dec)
	}
	return resp, nil
}

// Decisions lists the newest decisions first.
func (s *Service) Decisions(_ context.Context, limit int) ([]DecisionEntry, error) {
	return s.o.Log.Newest(limit), nil
}

// Keep stores the rejected exchange of a logged decision.
func (s *Service) Keep(ctx context.Context, decisionID string) (memory.Decision, error) {
	e, ok := s.o.Log.Find(decisionID)
	if !ok {
		return memory.Decision{}, fmt.Errorf("decision %q is not in the recent log: %w", decisionID, memory.ErrNotFound)
	}
	if e.Verdict != memory.VerdictRejected {
		return memory.Decision{}, &notRejectedError{id: decisionID, verdict: e.Verdict, memories: e.MemoryIDs}
	}
	ex := memory.Exchange{SessionID: e.SessionID, Turn: e.Turn, UserTurns: e.UserTurn, User: e.User, Assistant: e.Assistant,
		Project: e.Project, Source: e.Source}
	dec, err := s.o.Pipeline.Keep(ctx, ex)
	if err != nil {
		return dec, s.o.IndexLag(err)
	}
	s.o.Log.Add(dec, ex)
	return dec, nil
}

// notRejectedError is Keep's answer for a decision that was not rejected:
// what became of the exchange and where it is, in a sentence, rather than
// "invalid input". It is memory.ErrInvalid (a 400) all the same.
type notRejectedError struct {
	id       string
	verdict  memory.Verdict
	memories []string
}

func (e *notRejectedError) Error() string {
	ids := strings.Join(e.memories, ", ")
	var what string
	switch {
	case ids == "":
		return fmt.Sprintf("decision %s was %s, not rejected: only a rejected exchange can be kept", e.id, e.verdict)
	case e.verdict == memory.VerdictStored:
		what = "was stored as memory " + ids
	case e.verdict == memory.VerdictUpdated:
		what = "updated memory " + ids
	case e.verdict == memory.VerdictMerged:
		what = "was merged into memory " + ids
	case e.verdict == memory.VerdictDuplicate:
		what = "repeated memory " + ids + ", stored already"
	default:
		what = fmt.Sprintf("was %s (memory %s)", e.verdict, ids)
	}
	return fmt.Sprintf("decision %s %s: it is kept already, there is nothing to keep (`memtray get %s` shows it)", e.id, what, e.memories[0])
}

func (e *notRejectedError) Unwrap() error { return memory.ErrInvalid }

// NoiseReason is the trash reason of a memory a user marked as noise.
const NoiseReason = "noise"

// MarkNoise moves a memory to the trash (Options.Trash, reason
// NoiseReason), where a delete and the steward's prunes go, restorable as
// they are (`memtray trash restore ID`), and adds its text to the noise
// model's rejection buffer. A restore takes the text back out of the
// buffer (Restored). An unknown id is memory.ErrNotFound.
func (s *Service) MarkNoise(ctx context.Context, id string) error {
	m, err := s.o.Store.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("mark noise %s: %w", id, err)
	}
	if sc := s.o.Pipeline.Scorer(); sc != nil {
		if err := sc.Learn(ctx, m.Text, noise.SourceUser); err != nil {
			return fmt.Errorf("mark noise %s: %w", id, err)
		}
	}
	if err := s.o.Trash(ctx, id, NoiseReason); err != nil {
		return fmt.Errorf("mark noise %s: %w", id, err)
	}
	return nil
}

// Restored takes the texts of memories a restore brought back from the
// trash out of the noise model's rejection buffer, as Keep does for a
// rejected exchange: a restore says the memory is worth keeping, and a
// memory marked as noise (MarkNoise) would otherwise go on teaching the
// scorer to reject its like. A memory whose text is not in the buffer (a
// delete's, a steward prune's) is left alone; one no longer live is
// skipped. It reports how many texts left the buffer.
func (s *Service) Restored(ctx context.Context, ids []string) (int, error) {
	sc := s.o.Pipeline.Scorer()
	if sc == nil {
		return 0, nil
	}
	n := 0
	for _, id := range ids {
		m, err := s.o.Store.Get(ctx, id)
		if errors.Is(err, memory.ErrNotFound) {
			continue
		}
		if err != nil {
			return n, fmt.Errorf("restored %s: %w", id, err)
		}
		removed, err := sc.Forget(ctx, m.Text)
		if err != nil {
			return n, fmt.Errorf("restored %s: forget its text as noise: %w", id, err)
		}
		if removed {
			n++
		}
	}
	return n, nil
}

// Noise describes the content scorer and the judge.
func (s *Service) Noise(_ context.Context) (NoiseState, error) {
	var st NoiseState
	if sc := s.o.Pipeline.Scorer(); sc != nil {
		b, err := json.Marshal(sc.State())
		if err != nil {
			return st, err
		}
		st.Scorer = b
	}
	if s.o.Judge != nil {
		st.Judge = s.o.Judge.Name()
		if b, ok := s.o.Judge.(*judge.Budgeted); ok {
			raw, err := json.Marshal(b.Stats())
			if err != nil {
				return st, err
			}
			st.JudgeStats = raw
		}
	}
	return st, nil
}

// PreviewThreshold replays the recent decisions that reached the content
// gate under another threshold: which would now be rejected, which would
// pass on to the later stages.
func (s *Service) PreviewThreshold(_ context.Context, req ThresholdPreviewRequest) (ThresholdPreview, error) {
	t := req.ContentThreshold
	if !(t >= 0 && t <= 1) {
		return ThresholdPreview{}, &memory.FieldErrors{Message: "invalid preview",
			Fields: map[string]string{"content_threshold": "must be within 0..1"}}
	}
	cur := s.o.Threshold()
	if sc := s.o.Pipeline.Scorer(); sc != nil {
		cur = sc.Threshold()
	}
	pv := ThresholdPreview{Current: cur, Proposed: t, RejectedExamples: []ThresholdFlip{}, PassedExamples: []ThresholdFlip{}}
	for _, e := range s.o.Log.Newest(s.o.LogSize) {
		score, ok := e.Scores["content_score"]
		if !ok {
			continue
		}
		pv.Scored++
		was, will := score >= cur, score >= t
		flip := ThresholdFlip{DecisionID: e.ID, Score: score, Verdict: string(e.Verdict), Preview: e.Preview}
		switch {
		case was && !will:
			pv.NowRejected++
			if len(pv.RejectedExamples) < 5 {
				pv.RejectedExamples = append(pv.RejectedExamples, flip)
			}
		case !was && will:
			pv.NowPassed++
			if len(pv.PassedExamples) < 5 {
				pv.PassedExamples = append(pv.PassedExamples, flip)
			}
		}
	}
	return pv, nil
}

// ProjectionLabel bounds a projection point's label, in runes.
const ProjectionLabel = 120

// NoiseProjection projects the content scorer's prototypes and the recent
// decision log's exchanges (their redacted previews, embedded in one
// batch, at most MaxProjectionExchanges) onto their first two
// principal components. Without a scorer it is unavailable; with an empty
// log it projects the prototypes alone.
func (s *Service) NoiseProjection(ctx context.Context) (NoiseProjection, error) {
	sc := s.o.Pipeline.Scorer()
	if sc == nil {
		return NoiseProjection{}, fmt.Errorf("noise projection: %w: the content scorer is off (no embedder at start)", memory.ErrUnavailable)
	}
	protos := sc.Prototypes()
	var (
		vecs   [][]float32
		points []ProjectionPoint
	)
	for i, v := range protos.Quality {
		vecs = append(vecs, v)
		points = append(points, ProjectionPoint{Kind: PointQuality, Label: projectionText(protos.QualityLabels[i])})
	}
	static := len(protos.Noise) - protos.Learned
	for i, v := range protos.Noise {
		kind, label := PointNoise, protos.NoiseLabels[i]
		if i >= static {
			kind = PointLearned
		}
		label = strings.TrimPrefix(strings.TrimPrefix(label, "static: "), "learned: ")
		vecs = append(vecs, v)
		points = append(points, ProjectionPoint{Kind: kind, Label: projectionText(label)})
	}
	var (
		texts   []string
		entries []DecisionEntry
	)
	for _, e := range s.o.Log.Newest(MaxProjectionExchanges) {
		if strings.TrimSpace(e.Preview) == "" {
			continue
		}
		kind := PointStored
		if e.Verdict == memory.VerdictRejected {
			kind = PointRejected
		}
		pt := ProjectionPoint{Kind: kind, Label: projectionText(e.Preview)}
		if score, ok := e.Scores["content_score"]; ok {
			pt.Score = &score
		}
		texts = append(texts, e.Preview)
		entries = append(entries, e)
		points = append(points, pt)
	}
	if len(texts) > 0 {
		ev, err := s.o.Embedder.Embed(ctx, texts)
		if err != nil {
			return NoiseProjection{}, fmt.Errorf("noise projection: embed %d exchanges: %w", len(texts), err)
		}
		if len(ev) != len(texts) {
			return NoiseProjection{}, fmt.Errorf("noise projection: the embedder returned %d vectors for %d exchanges", len(ev), len(texts))
		}
		vecs = append(vecs, ev...)
	}
	rejected := nearestPrototypes(entries, vecs[len(vecs)-len(entries):], points[:len(vecs)-len(entries)], protos.Quality, protos.Noise)
	p, err := noise.Project(vecs)
	if err != nil {
		return NoiseProjection{}, fmt.Errorf("noise projection: %w", err)
	}
	for i := range points {
		points[i].X, points[i].Y = p.Points[i][0], p.Points[i][1]
	}
	return NoiseProjection{Points: points, Explained: p.Explained, Rejected: rejected}, nil
}

// nearestPrototypes lists, for each rejected entry (at most
// MaxNearestTurns, in order), its nearest noise prototypes and its nearest
// quality prototype. vecs are the entries' vectors; protoPoints are the
// prototypes' points, quality then noise, as are their vectors.
func nearestPrototypes(entries []DecisionEntry, vecs [][]float32, protoPoints []ProjectionPoint, quality, noiseVecs [][]float32) []RejectedNeighbours {
	out := []RejectedNeighbours{}
	for i, e := range entries {
		if e.Verdict != memory.VerdictRejected || len(out) == MaxNearestTurns {
			continue
		}
		rn := RejectedNeighbours{DecisionID: e.ID, Preview: projectionText(e.Preview), At: e.At, Stage: e.Stage, Reason: e.Reason, Noise: []PrototypeMatch{}}
		if score, ok := e.Scores["content_score"]; ok {
			rn.Score = &score
		}
		for j, q := range quality {
			m := PrototypeMatch{Kind: protoPoints[j].Kind, Label: protoPoints[j].Label, Similarity: memory.Cosine(vecs[i], q)}
			if rn.Quality == nil || m.Similarity > rn.Quality.Similarity {
				rn.Quality = &m
			}
		}
		for j, n := range noiseVecs {
			pt := protoPoints[len(quality)+j]
			rn.Noise = append(rn.Noise, PrototypeMatch{Kind: pt.Kind, Label: pt.Label, Similarity: memory.Cosine(vecs[i], n)})
		}
		slices.SortStableFunc(rn.Noise, func(a, b PrototypeMatch) int { return cmp.Compare(b.Similarity, a.Similarity) })
		rn.Noise = rn.Noise[:min(NearestNoise, len(rn.Noise))]
		out = append(out, rn)
	}
	return out
}

// projectionText is a label: redacted, one line, at most ProjectionLabel runes.
func projectionText(s string) string {
	s, _ = redact.Redact(s)
	s = memory.NormalizeSpace(s)
	if r := []rune(s); len(r) > ProjectionLabel {
		s = string(r[:ProjectionLabel-1]) + "…"
	}
	return s
}
