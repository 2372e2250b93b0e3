package daemon

import (
	"context"
	"fmt"
	"strings"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
	"github.com/memtray/memtray/backend/redact"
)

// projectionLabel bounds a projection point's label, in runes.
const projectionLabel = 120

// NoiseProjection projects the content scorer's prototypes and the recent
// decision log's exchanges (their redacted previews, embedded in one
// batch, at most httpapi.MaxProjectionExchanges) onto their first two
// principal components. Without a scorer it is unavailable; with an empty
// log it projects the prototypes alone.
func (d *Daemon) NoiseProjection(ctx context.Context) (httpapi.NoiseProjection, error) {
	sc := d.pipeline.Scorer()
	if sc == nil {
		return httpapi.NoiseProjection{}, fmt.Errorf("noise projection: %w: the content scorer is off (no embedder at start)", memory.ErrUnavailable)
	}
	protos := sc.Prototypes()
	var (
		vecs   [][]float32
		points []httpapi.ProjectionPoint
	)
	for i, v := range protos.Quality {
		vecs = append(vecs, v)
		points = append(points, httpapi.ProjectionPoint{Kind: httpapi.PointQuality, Label: projectionText(protos.QualityLabels[i])})
	}
	static := len(protos.Noise) - protos.Learned
	for i, v := range protos.Noise {
		kind, label := httpapi.PointNoise, protos.NoiseLabels[i]
		if i >= static {
			kind = httpapi.PointLearned
		}
		label = strings.TrimPrefix(strings.TrimPrefix(label, "static: "), "learned: ")
		vecs = append(vecs, v)
		points = append(points, httpapi.ProjectionPoint{Kind: kind, Label: projectionText(label)})
	}
	var texts []string
	for _, e := range d.decisions.newest(httpapi.MaxProjectionExchanges) {
		if strings.TrimSpace(e.Preview) == "" {
			continue
		}
		kind := httpapi.PointStored
		if e.Verdict == memory.VerdictRejected {
			kind = httpapi.PointRejected
		}
		pt := httpapi.ProjectionPoint{Kind: kind, Label: projectionText(e.Preview)}
		if s, ok := e.Scores["content_score"]; ok {
			pt.Score = &s
		}
		texts = append(texts, e.Preview)
		points = append(points, pt)
	}
	if len(texts) > 0 {
		ev, err := d.emb.Embed(ctx, texts)
		if err != nil {
			return httpapi.NoiseProjection{}, fmt.Errorf("noise projection: embed %d exchanges: %w", len(texts), err)
		}
		if len(ev) != len(texts) {
			return httpapi.NoiseProjection{}, fmt.Errorf("noise projection: the embedder returned %d vectors for %d exchanges", len(ev), len(texts))
		}
		vecs = append(vecs, ev...)
	}
	p, err := noise.Project(vecs)
	if err != nil {
		return httpapi.NoiseProjection{}, fmt.Errorf("noise projection: %w", err)
	}
	for i := range points {
		points[i].X, points[i].Y = p.Points[i][0], p.Points[i][1]
	}
	return httpapi.NoiseProjection{Points: points, Explained: p.Explained}, nil
}

// projectionText is a label: redacted, one line, at most projectionLabel runes.
func projectionText(s string) string {
	s, _ = redact.Redact(s)
	s = memory.NormalizeSpace(s)
	if r := []rune(s); len(r) > projectionLabel {
		s = string(r[:projectionLabel-1]) + "…"
	}
	return s
}
