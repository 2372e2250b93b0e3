package ingest

import "regexp"

// needLead opens a user's need for something the turn is to build: "we
// will also need ...", "I think we need a setting for ...", "we do need a
// way to ...". A need stated with a rule word ("we will always need ...")
// stands (standing); a need without an article ("we need Node 20 for the
// build") is a fact about the project and is not matched.
var needLead = regexp.MustCompile(`^(?:(?:ok(?:ay)?|yes|yeah|so|and|also|then|now|but)\b[\s,.;:!—–-]*)*(?:i think |i guess )?(?:we(?:'ll| will)(?: also| still)? (?:need|want)\b|we (?:also |still |do )?(?:need|want) (?:a|an|some|more|another|other)\b)`)
