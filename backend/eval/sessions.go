package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
)

// SessionSetFormat is the "format" of a labelled session set.
const SessionSetFormat = "memtray-sessions"

// The places a fact of a labelled session was stated (Fact.Where).
const (
	WhereUser        = "user"
	WhereToolLoop    = "tool-loop"
	WhereFinalAnswer = "final-answer"
)

// Wheres are the Fact.Where values, in report order.
var Wheres = []string{WhereUser, WhereToolLoop, WhereFinalAnswer}

// KindPreference is the Fact.Kind of a preference of the user's own (how
// they like to work), which should reach every project.
const KindPreference = "preference"

// Bounds of a session set, checked by ParseSessionSet.
const (
	maxSessionSetBytes = 32 << 20
	maxSetSessions     = 1000
	maxSetItems        = 100000 // facts, traps, queries or prompts of one list
	maxKeyGroups       = 32
	maxKeyAlternatives = 64
	maxKeyBytes        = 1024
	maxPromptBytes     = 64 << 10
)

// SessionSet is a labelled set of real agent sessions, the format of
// ../shared/eval/sessions-dev.json: the facts a memory tool should keep
// from each session, the statements the session later revised (traps),
// questions a later session would ask, and prompts unrelated to all of
// them. Fields the evaluation does not use (summaries, turns, importance)
// are ignored.
type SessionSet struct {
	Format           string            `json:"format"`
	Version          int               `json:"version"`
	Sessions         []LabelledSession `json:"sessions"`
	UnrelatedPrompts []string          `json:"unrelated_prompts"`
}

// LabelledSession is one session of a SessionSet.
type LabelledSession struct {
	ID string `json:"id"`
	// Agent names the session file's format: claude-code, codex, aider,
	// cursor...
	Agent string `json:"agent"`
	// File is the session's path, relative to the set file's folder.
	File string `json:"file"`
	// Project is the labeller's name for the project (informative: recall
	// uses the project memtray gave the session's memories).
	Project   string `json:"project"`
	UserTurns int    `json:"user_turns"`
	Facts     []Fact `json:"facts"`
	Traps     []Trap `json:"traps"`
}

// Fact is a durable fact a session states.
type Fact struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	// Where is where the session states it: WhereUser, WhereToolLoop or
	// WhereFinalAnswer.
	Where string `json:"where"`
	// Kind is the labeller's kind of fact (preference, convention,
	// decision, config...): informative, except that a KindPreference
	// stated by the user (userPreference) is also asked from outside its
	// project.
	Kind string `json:"kind,omitempty"`
	// Keys decide coverage: a text covers the fact when it contains an
	// alternative of every group (see Covers).
	Keys [][]string `json:"keys"`
	// Queries are questions a later session would ask to get it back.
	Queries []string `json:"queries"`
}

// Trap is a statement the session later revised: a memory still holding
// it (not superseded) misleads.
type Trap struct {
	Statement string     `json:"statement"`
	Keys      [][]string `json:"keys"`
	Why       string     `json:"why"`
}

// LoadSessionSet reads and validates a session set file.
func LoadSessionSet(path string) (*SessionSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval sessions: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSessionSetBytes+1))
	if err != nil {
		return nil, fmt.Errorf("eval sessions: read %s: %w", path, err)
	}
	set, err := ParseSessionSet(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// ParseSessionSet decodes and validates a session set: one JSON object of
// at most 32 MiB; sessions with unique, non-empty ids, an agent and a
// relative file; facts with unique ids, a known Where, at least one key
// group of non-empty alternatives and one query; traps with keys. Errors
// name the session and the fact.
func ParseSessionSet(data []byte) (*SessionSet, error) {
	if len(data) > maxSessionSetBytes {
		return nil, fmt.Errorf("eval sessions: set larger than %d bytes", maxSessionSetBytes)
	}
	if !utf8.Valid(data) {
		return nil, errors.New("eval sessions: set is not valid UTF-8")
	}
	var set SessionSet
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&set); err != nil {
		return nil, fmt.Errorf("eval sessions: %w", err)
	}
	if dec.More() {
		return nil, errors.New("eval sessions: data after the JSON object")
	}
	if err := set.validate(); err != nil {
		return nil, fmt.Errorf("eval sessions: %w", err)
	}
	return &set, nil
}

func (s *SessionSet) validate() error {
	if s.Format != "" && s.Format != SessionSetFormat {
		return fmt.Errorf("format %q is not %q", s.Format, SessionSetFormat)
	}
	if s.Version > 1 {
		return fmt.Errorf("version %d is newer than this memtray reads (1)", s.Version)
	}
	if len(s.Sessions) == 0 || len(s.Sessions) > maxSetSessions {
		return fmt.Errorf("want 1..%d sessions, got %d", maxSetSessions, len(s.Sessions))
	}
	if len(s.UnrelatedPrompts) > maxSetItems {
		return fmt.Errorf("more than %d unrelated prompts", maxSetItems)
	}
	for i, p := range s.UnrelatedPrompts {
		if strings.TrimSpace(p) == "" || len(p) > maxPromptBytes {
			return fmt.Errorf("unrelated prompt %d: want 1..%d bytes of text", i+1, maxPromptBytes)
		}
	}
	ids := map[string]bool{}
	for i := range s.Sessions {
		ss := &s.Sessions[i]
		name := fmt.Sprintf("session %d", i+1)
		if ss.ID != "" {
			name = fmt.Sprintf("session %q", ss.ID)
		}
		switch {
		case strings.TrimSpace(ss.ID) == "":
			return fmt.Errorf("%s: no id", name)
		case ids[ss.ID]:
			return fmt.Errorf("%s: id appears twice", name)
		case strings.TrimSpace(ss.Agent) == "":
			return fmt.Errorf("%s: no agent", name)
		case strings.TrimSpace(ss.File) == "":
			return fmt.Errorf("%s: no file", name)
		case strings.HasPrefix(ss.File, "/") || strings.HasPrefix(ss.File, `\`) || strings.Contains(ss.File, ":") || strings.ContainsRune(ss.File, 0):
			return fmt.Errorf("%s: file %q must be relative to the set file's folder", name, ss.File)
		case ss.UserTurns < 0:
			return fmt.Errorf("%s: user_turns is negative", name)
		case len(ss.Facts) > maxSetItems || len(ss.Traps) > maxSetItems:
			return fmt.Errorf("%s: more than %d facts or traps", name, maxSetItems)
		}
		ids[ss.ID] = true
		factIDs := map[string]bool{}
		for j := range ss.Facts {
			f := &ss.Facts[j]
			fname := fmt.Sprintf("%s: fact %d", name, j+1)
			if f.ID != "" {
				fname = fmt.Sprintf("%s: fact %q", name, f.ID)
			}
			switch {
			case strings.TrimSpace(f.ID) == "":
				return fmt.Errorf("%s: no id", fname)
			case factIDs[f.ID]:
				return fmt.Errorf("%s: id appears twice", fname)
			case !slices.Contains(Wheres, f.Where):
				return fmt.Errorf("%s: where %q is not one of %s", fname, f.Where, strings.Join(Wheres, ", "))
			case len(f.Queries) == 0 || len(f.Queries) > maxSetItems:
				return fmt.Errorf("%s: want 1..%d queries", fname, maxSetItems)
			}
			factIDs[f.ID] = true
			if err := validKeys(f.Keys); err != nil {
				return fmt.Errorf("%s: %w", fname, err)
			}
			for k, q := range f.Queries {
				if strings.TrimSpace(q) == "" || len(q) > maxPromptBytes {
					return fmt.Errorf("%s: query %d: want 1..%d bytes of text", fname, k+1, maxPromptBytes)
				}
			}
		}
		for j := range ss.Traps {
			if err := validKeys(ss.Traps[j].Keys); err != nil {
				return fmt.Errorf("%s: trap %d: %w", name, j+1, err)
			}
		}
	}
	return nil
}

// validKeys checks key groups: 1..32 groups of 1..64 non-blank
// alternatives of at most 1 KiB.
func validKeys(keys [][]string) error {
	if len(keys) == 0 || len(keys) > maxKeyGroups {
		return fmt.Errorf("want 1..%d key groups, got %d", maxKeyGroups, len(keys))
	}
	for i, g := range keys {
		if len(g) == 0 || len(g) > maxKeyAlternatives {
			return fmt.Errorf("key group %d: want 1..%d alternatives, got %d", i+1, maxKeyAlternatives, len(g))
		}
		for _, alt := range g {
			if strings.TrimSpace(alt) == "" || len(alt) > maxKeyBytes {
				return fmt.Errorf("key group %d: an alternative is blank or longer than %d bytes", i+1, maxKeyBytes)
			}
		}
	}
	return nil
}

// Covers reports whether text holds a fact (or trap) with these keys: it
// contains, case-insensitively, at least one alternative of every group.
// No keys cover nothing.
func Covers(text string, keys [][]string) bool {
	return coversLower(strings.ToLower(text), keys)
}

// coversLower is Covers on a text already lower-cased.
func coversLower(lower string, keys [][]string) bool {
	if len(keys) == 0 {
		return false
	}
	for _, g := range keys {
		if !slices.ContainsFunc(g, func(alt string) bool { return strings.Contains(lower, strings.ToLower(alt)) }) {
			return false
		}
	}
	return true
}

// lowerTexts returns the memories' texts lower-cased, once for all the
// key checks.
func lowerTexts(texts []string) []string {
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = strings.ToLower(t)
	}
	return out
}

// anyCovers reports whether one of the (lower-cased) texts covers keys.
func anyCovers(lower []string, keys [][]string) bool {
	return slices.ContainsFunc(lower, func(t string) bool { return coversLower(t, keys) })
}

// factCoverage reports, for each fact, whether one of the memory texts
// covers it.
func factCoverage(facts []Fact, texts []string) []bool {
	lower := lowerTexts(texts)
	out := make([]bool, len(facts))
	for i := range facts {
		out[i] = anyCovers(lower, facts[i].Keys)
	}
	return out
}

// coveringMemories counts the memory texts that cover at least one fact:
// precision's numerator.
func coveringMemories(facts []Fact, texts []string) int {
	n := 0
	for _, t := range lowerTexts(texts) {
		if slices.ContainsFunc(facts, func(f Fact) bool { return coversLower(t, f.Keys) }) {
			n++
		}
	}
	return n
}

// trapsKept returns how many traps some memory text covers and how many
// memory texts cover some trap, read the way the labels mean them
// (trapCoversLower).
func trapsKept(traps []Trap, texts []string) (kept, memories int) {
	lower := lowerTexts(texts)
	for _, tr := range traps {
		if slices.ContainsFunc(lower, func(t string) bool { return trapCoversLower(t, tr.Keys) }) {
			kept++
		}
	}
	for _, t := range lower {
		if slices.ContainsFunc(traps, func(tr Trap) bool { return trapCoversLower(t, tr.Keys) }) {
			memories++
		}
	}
	return kept, memories
}

// WhereCount is the coverage of the facts stated in one place.
type WhereCount struct {
	Covered int `json:"covered"`
	Facts   int `json:"facts"`
}

// coverageByWhere counts facts and covered facts per Where (every Wheres
// value present, zero or not).
func coverageByWhere(facts []Fact, covered []bool) map[string]WhereCount {
	out := map[string]WhereCount{}
	for _, w := range Wheres {
		out[w] = WhereCount{}
	}
	for i, f := range facts {
		c := out[f.Where]
		c.Facts++
		if covered[i] {
			c.Covered++
		}
		out[f.Where] = c
	}
	return out
}

// hitCovers reports whether one of the first k given texts covers keys:
// a hit of R@k.
func hitCovers(given []string, keys [][]string, k int) bool {
	return anyCovers(lowerTexts(given[:min(k, len(given))]), keys)
}

// ratio is n/d, 0 when d is 0.
func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// percentile returns the p-th percentile (0..100, nearest rank) of xs; 0
// for none.
func percentile(xs []int, p float64) int {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Ints(s)
	rank := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(rank, len(s)-1))]
}

// runeLengths returns the texts' lengths in characters.
func runeLengths(texts []string) []int {
	out := make([]int, len(texts))
	for i, t := range texts {
		out[i] = utf8.RuneCountInString(t)
	}
	return out
}

// memoryTexts returns the memories' texts.
func memoryTexts(ms []memory.Memory) []string {
	out := make([]string, len(ms))
	for i := range ms {
		out[i] = ms[i].Text
	}
	return out
}
