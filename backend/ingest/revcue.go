package ingest

// revisionOff names mechanisms of dropRevised switched off ("cue-word",
// "focus"), for measuring each one alone.
var revisionOff = map[string]bool{}

// withoutCue returns a revising sentence's subject less its revision cue
// words ("instead", "persist"): the cue marks a correction, it does not
// name what is corrected, so "instead of polling ..." and "... uses
// webhooks instead" share no subject through it (turnjudge.go's revised
// subject leaves the cue out alike).
func withoutCue(subj map[string]bool) map[string]bool {
	if revisionOff["cue-word"] {
		return subj
	}
	out := make(map[string]bool, len(subj))
	for t := range subj {
		if !revisionCue.MatchString(t) {
			out[t] = true
		}
	}
	return out
}
