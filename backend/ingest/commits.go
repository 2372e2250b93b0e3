package ingest

import "regexp"

// commitLabel opens a line that quotes a commit message: "Commit: docs:
// update the README", "Commit 2 (docs): ...", "Message: ...". The
// repository keeps its commit messages; what the change made exist is said
// in the answer's other lines. Matched against the lowercased sentence.
var commitLabel = regexp.MustCompile(`^(?:commit(?: message| subject)?(?: \d+)?(?: \([^)]{1,30}\))?|message)\s*:\s*\S`)
