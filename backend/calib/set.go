package calib

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// setJSON is the shipped calibration set.
//
//go:embed set.json
var setJSON []byte

// Limits of a calibration set, so that embedding one stays a matter of
// seconds.
const (
	maxGroups  = 200
	maxPrompts = 400
	maxText    = 2000
	minGroups  = 8
	minPrompts = 8
)

// Group is one fact as a stored memory and three texts scored against it.
type Group struct {
	// ID names the group; prompts name it as their relevant memory.
	ID string `json:"id"`
	// Topic groups facts of one area; unrelated pairs pair memories of
	// different topics.
	Topic string `json:"topic"`
	// Memory is the stored memory.
	Memory string `json:"memory"`
	// Near is a near duplicate of Memory: the same fact with a word or two
	// changed.
	Near string `json:"near"`
	// Paraphrase states Memory's fact in other words.
	Paraphrase string `json:"paraphrase"`
	// Related is another fact of the same project and topic.
	Related string `json:"related"`
}

// Prompt is a user prompt and the group whose memory answers it, or ""
// when no memory of the set does.
type Prompt struct {
	Text     string `json:"text"`
	Relevant string `json:"relevant"`
}

// Set is a labelled calibration set.
type Set struct {
	About   string   `json:"about,omitempty"`
	Groups  []Group  `json:"groups"`
	Prompts []Prompt `json:"prompts"`
	// Version identifies the set's content (a hash): a stored calibration
	// of another version is made again.
	Version string `json:"-"`
}

// ParseSet reads and checks a calibration set in JSON: every text
// non-empty valid UTF-8 of at most 2,000 bytes, group ids unique, at
// least two topics, every prompt's relevant group known, and at least 8
// groups, 8 prompts with a relevant memory and 8 without.
func ParseSet(data []byte) (*Set, error) {
	var s Set
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("calibration set: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("calibration set: %w", err)
	}
	sum := sha256.Sum256(data)
	s.Version = hex.EncodeToString(sum[:6])
	return &s, nil
}

func (s *Set) check() error {
	if len(s.Groups) < minGroups || len(s.Groups) > maxGroups {
		return fmt.Errorf("%d groups, want %d..%d", len(s.Groups), minGroups, maxGroups)
	}
	if len(s.Prompts) > maxPrompts {
		return fmt.Errorf("%d prompts, want at most %d", len(s.Prompts), maxPrompts)
	}
	ids := map[string]bool{}
	topics := map[string]bool{}
	for i, g := range s.Groups {
		if strings.TrimSpace(g.ID) == "" || ids[g.ID] {
			return fmt.Errorf("group %d: id %q empty or repeated", i, g.ID)
		}
		ids[g.ID] = true
		if strings.TrimSpace(g.Topic) == "" {
			return fmt.Errorf("group %s: no topic", g.ID)
		}
		topics[g.Topic] = true
		for name, t := range map[string]string{"memory": g.Memory, "near": g.Near, "paraphrase": g.Paraphrase, "related": g.Related} {
			if err := checkText(t); err != nil {
				return fmt.Errorf("group %s: %s: %w", g.ID, name, err)
			}
		}
	}
	if len(topics) < 2 {
		return fmt.Errorf("%d topics, want at least 2 (unrelated pairs join different topics)", len(topics))
	}
	var with, without int
	for i, p := range s.Prompts {
		if err := checkText(p.Text); err != nil {
			return fmt.Errorf("prompt %d: %w", i, err)
		}
		switch {
		case p.Relevant == "":
			without++
		case ids[p.Relevant]:
			with++
		default:
			return fmt.Errorf("prompt %d: unknown relevant group %q", i, p.Relevant)
		}
	}
	if with < minPrompts || without < minPrompts {
		return fmt.Errorf("%d prompts with a relevant memory and %d without, want at least %d of each", with, without, minPrompts)
	}
	return nil
}

func checkText(t string) error {
	switch {
	case strings.TrimSpace(t) == "":
		return fmt.Errorf("empty text")
	case len(t) > maxText:
		return fmt.Errorf("text of %d bytes, want at most %d", len(t), maxText)
	case !utf8.ValidString(t):
		return fmt.Errorf("text is not valid UTF-8")
	}
	return nil
}

// Builtin returns the calibration set shipped in the binary (set.json).
var Builtin = sync.OnceValue(func() *Set {
	s, err := ParseSet(setJSON)
	if err != nil {
		panic(err) // a broken build: TestBuiltinSet checks it
	}
	return s
})
