package daemon

import (
	"context"

	"github.com/memtray/memtray/backend/httpapi"
)

// PreviewThreshold replays the recent decisions that reached the content
// gate under another threshold: which would now be rejected, which would
// pass on to the later stages.
func (d *Daemon) PreviewThreshold(_ context.Context, req httpapi.ThresholdPreviewRequest) (httpapi.ThresholdPreview, error) {
	t := req.ContentThreshold
	if !(t >= 0 && t <= 1) {
		return httpapi.ThresholdPreview{}, &httpapi.FieldErrors{Message: "invalid preview",
			Fields: map[string]string{"content_threshold": "must be within 0..1"}}
	}
	cur := d.settings.Live().Ingest.ContentThreshold
	if sc := d.pipeline.Scorer(); sc != nil {
		cur = sc.Threshold()
	}
	pv := httpapi.ThresholdPreview{Current: cur, Proposed: t, RejectedExamples: []httpapi.ThresholdFlip{}, PassedExamples: []httpapi.ThresholdFlip{}}
	for _, e := range d.decisions.newest(d.cfg.Ingest.DecisionLog) {
		score, ok := e.Scores["content_score"]
		if !ok {
			continue
		}
		pv.Scored++
		was, will := score >= cur, score >= t
		flip := httpapi.ThresholdFlip{DecisionID: e.ID, Score: score, Verdict: string(e.Verdict), Preview: e.Preview}
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
