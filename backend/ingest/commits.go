package ingest

import "regexp"

// commitLabel opens a line that quotes a commit message: "Commit: docs:
// update the README", "Commit 2 (docs): ...", "Message: ...". The
// repository keeps its commit messages; what the change made exist is said
// in the answer's other lines. Matched against the lowercased sentence.
var commitLabel = regexp.MustCompile(`^(?:commit(?: message| subject)?(?: \d+)?(?: \([^)]{1,30}\))?|message)\s*:\s*\S`)

// testCount is a count of tests run, passing or added: "all 157 tests
// pass", "36 passing locally", "(expanded to 17 tests)", "updated count to
// 42", the count closing a clause after the verb ("kept everything
// passing (29): ...", "tests still pass (36/36)."). It is the state of one run, stale by the next
// change, whatever else the sentence lists. Matched against the
// lowercased sentence.
var testCount = regexp.MustCompile(`\b(?:pass(?:ing|ed|es)?|green)\s*\(\d+(?:/\d+)?\)(?:[:.,;]|$)|\b\d+ (?:new |unit |integration )?(?:tests?|specs?|cases?) (?:pass(?:ed|ing|es)?|green|ok|fail(?:ed|ing|s)?)\b|\b\d+ (?:passing|passed|failing|failed)\b|\(\d+ (?:new )?tests?\)|\b(?:test )?count (?:to|is|now) \d+\b|expanded to \d+ tests`)
