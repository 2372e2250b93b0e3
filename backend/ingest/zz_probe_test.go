package ingest

import (
	"fmt"
	"testing"
)

func TestZZProbe(t *testing.T) {
	rev := "It looks like the changelog update was not actually applied—the file content you provided does not include the SpecStory references, and there are still two `[Unreleased]` sections (a merge artifact)."
	for _, st := range []string{
		"The `setTaskStatus` method now robustly updates the checkbox for the correct task, regardless of whitespace or other content. This will reliably change `[ ]` to `[x]` (and vice versa) for the line containing the correct `[#id]`.",
		"Update the logic to resolve the repo path from the session name if provided, or use the explicit repo path, or fall back to the current working directory (using `getCurrentRepo`).",
	} {
		fmt.Println("subj st", subjectOf(st))
	}
	fmt.Println("subj rev", withoutCue(subjectOf(rev)))
	fmt.Println("focus", cueFocus(rev))
	fmt.Println("class", sentenceClass(rev, OriginFinal))
}
