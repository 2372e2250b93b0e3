package ingest

import (
	"encoding/json"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// An undo in other words, made by a diff. A turn may remove a setting
// without saying so: its apply_patch takes out the line "continue-on-error:
// true" and its answer speaks of something else. The removal is an undo of
// the setting's key (removedSetting), as a narrated removal is, for the
// gloss link only (gloss.go): the key must be glossed by the session and
// the lines around the removed one must share a word of the gloss's
// description. A later turn's removals reach Distill as a text of
// LaterTexts (removedLaterText), so that batch ingest and live capture
// (which keeps such calls in a slimmed turn: slimCalls) read the same.

// removedSetting is a setting a diff takes out of a file: its key and the
// subject of the lines shown around it.
type removedSetting struct {
	key     string // lowered
	subject map[string]bool
	// file, around and at are where it was: the file, the lines shown
	// around it, its line's index among them (removalCall's patch).
	file   string
	around []string
	at     int
	// bare is true when no line shown around it stays: the hunk shows
	// the removed lines alone (an Edit's new_string "", a hunk of "-"
	// lines, an empty REPLACE), and its subject is what turnRemovals
	// adds (bareSubject).
	bare bool
}

// settingContext is how many lines before and after a removed line give
// its subject: a YAML step's name sits a few lines above its options.
const settingContext = 3

// removedSettings returns the settings the patch takes out of the files
// it updates: the key of each line its hunks remove (takenOut) that no
// line after the patch sets (setKeys: in any of its files, a setting
// moved to another file stays), once each, with the subject of the lines
// shown around it (settingContext either side), bare when each of those
// is taken out too and sets no key set after the patch (kept), as
// removalSections marks them.
func (p *patch) removedSettings() []removedSetting {
	var out []removedSetting
	seen := map[string]bool{}
	set := p.setKeys()
	for _, f := range p.files {
		if f.op != patchUpdate {
			continue
		}
		taken, sf := f.takenOut(), settingFileOf(f.path)
		for i, gone := range taken {
			if !gone {
				continue
			}
			key := lineKey(sf, f.before[i])
			if key == "" || set[key] || seen[key] || len(key) < 3 {
				continue
			}
			seen[key] = true
			from, to := max(0, i-settingContext), min(len(f.before), i+settingContext+1)
			around := f.before[from:to]
			bare := true
			for k := from; k < to; k++ {
				bare = bare && taken[k] && !set[lineKey(sf, f.before[k])]
			}
			out = append(out, removedSetting{key: key, subject: subjectOf(strings.Join(around, "\n")), file: f.path, around: around, at: i - from, bare: bare})
		}
	}
	return out
}

// lineKey is the key a line of the file f sets (settingFile.key),
// lowered; "" for none.
func lineKey(f settingFile, l string) string {
	return strings.ToLower(f.key(l))
}

// setKeys returns the keys the lines after the patch set, in any of its
// files (lineKey).
func (p *patch) setKeys() map[string]bool {
	set := map[string]bool{}
	for _, f := range p.files {
		sf := settingFileOf(f.path)
		for _, l := range f.after {
			if k := lineKey(sf, l); k != "" {
				set[k] = true
			}
		}
	}
	return set
}

// takenOut reports, for each line the file shows before the patch,
// whether the patch takes it out: no line after it is the same (each line
// after matched once, to the first such line before: a context line, or
// one the hunk adds back).
func (f patchFile) takenOut() []bool {
	after := map[string]int{}
	for _, l := range f.after {
		after[l]++
	}
	out := make([]bool, len(f.before))
	for i, l := range f.before {
		if after[l] > 0 {
			after[l]--
			continue
		}
		out[i] = true
	}
	return out
}

// turnRemovals returns the settings the turn's patches remove, each with
// the step of its call (a call that failed left out), and those the
// SEARCH/REPLACE blocks of a step's text remove (Aider's edits, read as a
// patch by searchReplacePatch: only the blocks of a file Aider says it
// applied, aiderApplied); patches are the turn's parsed patches
// (turnPatches).
func turnRemovals(t Turn, patches [][]*patch) (out []removedSetting, steps []int) {
	for i, s := range t.Steps {
		if s.Error {
			continue
		}
		for j := range s.Calls {
			p := patchAt(patches, i, j)
			if p == nil || callFailed(t, i, j) {
				continue
			}
			for _, r := range p.removedSettings() {
				out, steps = append(out, bareSubject(r, s.Text)), append(steps, i)
			}
		}
		if !strings.Contains(s.Text, "SEARCH") {
			continue
		}
		p := searchReplacePatch(s.Text)
		p.files = slices.DeleteFunc(p.files, func(f patchFile) bool { return !aiderApplied(t, i, f.path) })
		for _, r := range p.removedSettings() {
			out, steps = append(out, bareSubject(r, s.Text)), append(steps, i)
		}
	}
	return out, steps
}

// bareSubject returns r with, when its hunk shows no line around it that
// stays (r.bare), the words of what the step said with the edit (its
// text outside code: stepProse) and of its file's name added to its
// subject: the lines around a removal say which part of the file it was
// in, and a bare one has none, so what the agent said of the edit and
// the file's name stand for them. The step's text and the file's name are
// kept in a slimmed turn, so live capture reads the same subject.
func bareSubject(r removedSetting, text string) removedSetting {
	if !r.bare || evidenceOff["bare-removal"] {
		return r
	}
	subj := maps.Clone(r.subject)
	maps.Copy(subj, subjectOf(stepProse(text)))
	maps.Copy(subj, subjectOf(fileStem.ReplaceAllString(path.Base(strings.ReplaceAll(r.file, "\\", "/")), " ")))
	r.subject = subj
	return r
}

// fileStem matches what parts a file's name into words: its extension,
// and a dot, dash or underscore between them ("gh-pages.yml": "gh pages").
var fileStem = regexp.MustCompile(`\.[^.]*$|[._-]`)

// stepProse returns the lines of a step's text outside code: fenced
// blocks and Aider's SEARCH/REPLACE blocks left out.
func stepProse(text string) string {
	var b strings.Builder
	fenced, block := false, false
	for _, l := range splitLines(text) {
		switch {
		case aiderSearch.MatchString(l):
			block = true
		case aiderReplace.MatchString(l):
			block = false
		case fenceLine(l) != nil:
			fenced = !fenced
		case !fenced && !block:
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// removedLaterText renders the turn's removed settings for LaterTexts (a
// LaterSettingsRemoved text: Distill reads no sentences from it), one
// "key\tsubject words" line each; "" for none.
func removedLaterText(t Turn, patches [][]*patch) string {
	rs, _ := turnRemovals(t, patches)
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.key + "\t" + strings.Join(slices.Sorted(maps.Keys(r.subject)), " ") + "\n")
	}
	return b.String()
}

// laterSettingRemovals reads a later turn's removed settings (removedLaterText)
// as undos at pos.
func laterSettingRemovals(l LaterText, pos int) []undo {
	if l.From != LaterSettingsRemoved {
		return nil
	}
	var out []undo
	for _, line := range strings.Split(l.Text, "\n") {
		key, words, ok := strings.Cut(line, "\t")
		if !ok || key == "" {
			continue
		}
		subj := map[string]bool{}
		for _, w := range strings.Fields(words) {
			subj[w] = true
		}
		out = append(out, removalUndo(removedSetting{key: key, subject: subj}, "a later turn's patch removes "+key, pos))
	}
	return out
}

// removalUndo is a removed setting as an undo of its key at pos, for the
// gloss link (glossUndos).
func removalUndo(r removedSetting, text string, pos int) undo {
	return undo{posSentence: posSentence{text: text, pos: pos}, subject: r.subject, tokens: map[string]bool{r.key: true}, removed: true}
}

// removalCall returns what a slimmed turn keeps of a call whose patch
// removes a setting (slim: a later turn's removals are read from it): an
// apply_patch of the lines shown around each removed one
// (removalSections), which reads as the same removals with the same
// subjects (removedSettings), however close the removed lines sit; ok is
// false for any other call.
func removalCall(c memory.ToolCall, p *patch) (keep memory.ToolCall, ok bool) {
	if p == nil {
		return memory.ToolCall{}, false
	}
	sections := removalSections(p)
	if sections == "" {
		return memory.ToolCall{}, false
	}
	return slimPatchCall(c, sections)
}

// removalSections renders the settings p removes (removedSettings) as
// patch sections of the lines shown around each removed one
// (settingContext either side; one section for each run of lines whose
// windows overlap), as p marks them: a line p takes out is removed again,
// unless it sets a key a line after the patch sets (kept, so that key
// stays set); "" for none.
func removalSections(p *patch) string {
	rs := p.removedSettings()
	if len(rs) == 0 {
		return ""
	}
	removed := map[string]bool{}
	for _, r := range rs {
		removed[r.key] = true
	}
	set := p.setKeys()
	var b strings.Builder
	for _, f := range p.files {
		if f.op != patchUpdate {
			continue
		}
		gone, sf := f.takenOut(), settingFileOf(f.path)
		end := -1 // the end of the section being written; -1 for none
		for i, g := range gone {
			if !g || !removed[lineKey(sf, f.before[i])] {
				continue
			}
			from, to := max(0, i-settingContext), min(len(f.before), i+settingContext+1)
			if from >= end {
				b.WriteString("*** Update File: " + f.path + "\n@@\n")
			} else {
				from = end // the section goes on
			}
			for k := from; k < to; k++ {
				mark := " "
				if gone[k] && !set[lineKey(sf, f.before[k])] {
					mark = "-"
				}
				b.WriteString(mark + f.before[k] + "\n")
			}
			end = to
		}
	}
	return b.String()
}

// slimPatchCall returns c with its input replaced by an apply_patch of
// sections (Codex's shell form, which callPatch reads whatever c's name).
func slimPatchCall(c memory.ToolCall, sections string) (memory.ToolCall, bool) {
	in, err := json.Marshal(map[string]any{"command": []string{"apply_patch", "*** Begin Patch\n" + sections + "*** End Patch"}})
	if err != nil {
		return memory.ToolCall{}, false
	}
	return memory.ToolCall{ID: c.ID, Name: c.Name, Input: string(in)}, true
}

// turnRemovalUndos returns the settings the turn's own patches remove as
// undos, each placed after its step's sentences (stepEnd), twice: as the
// start of the turn's and later turns' removals, and as the turn's own
// (for glossedRemoval). None with evidenceOff["gloss-diff"].
func turnRemovalUndos(t Turn, patches [][]*patch, stepEnd []int) (all, own []undo) {
	if evidenceOff["gloss-diff"] {
		return nil, nil
	}
	rs, steps := turnRemovals(t, patches)
	for k, r := range rs {
		own = append(own, removalUndo(r, "the turn's patch removes "+r.key, stepEnd[steps[k]]))
	}
	return slices.Clip(own), own
}

// glossedRemoval reports whether one of the turn's own removed settings
// (own) is an identifier the session glossed, in what it said before the
// turn (held) or in the turn (sents), with a word of the description
// around it: the turn then revises what earlier turns said in other words
// (live capture distils them again).
func glossedRemoval(t Turn, sents []posSentence, own []undo) bool {
	return len(own) > 0 && !evidenceOff["gloss"] && len(glossUndos(own, sessionGlosses(t.held, sents, own))) > 0
}
