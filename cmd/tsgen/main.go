// Command tsgen writes the TypeScript types of memtray's HTTP API from
// its Go types, so the frontend never declares them by hand. It honours
// json tags: omitempty and omitzero make a field optional, "-" skips it,
// embedded structs are flattened; time.Time and []byte are strings, maps
// are Record<string, T>, json.RawMessage and interfaces are unknown,
// config.Duration is a string ("1h30m").
//
//	go run ./cmd/tsgen -o frontend/src/lib/api/types.ts
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/autostart"
	"github.com/memtray/memtray/backend/calib"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/events"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/importer"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/setup"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// roots are the API's request, response and event types; the types they
// reference are emitted too.
var roots = []any{
	httpapi.AddRequest{}, httpapi.SearchRequest{}, httpapi.ListRequest{}, httpapi.ListResponse{},
	httpapi.ListedMemory{}, httpapi.Stats{}, httpapi.PipelineStats{}, httpapi.Health{}, httpapi.Document{},
	httpapi.IngestRequest{}, httpapi.IngestResponse{}, httpapi.DecisionEntry{}, httpapi.CaptureState{},
	httpapi.CaptureUpdate{}, httpapi.RateRequest{}, httpapi.PinRequest{}, httpapi.SnoozeRequest{},
	httpapi.NoiseState{}, httpapi.ImportClaudeRequest{}, httpapi.ImportClaudeReport{},
	httpapi.ApplyRequest{}, httpapi.UndoRequest{}, httpapi.RestoreRequest{}, httpapi.TrashPurgeRequest{}, httpapi.TrashPurgeResult{},
	httpapi.MemoryEvent{}, httpapi.StewardEvent{}, httpapi.StatsEvent{}, httpapi.PingEvent{}, httpapi.ResetEvent{},
	httpapi.MemoryPatch{}, httpapi.EditResult{}, httpapi.MemoryHistory{}, httpapi.Overview{},
	httpapi.ConfigView{}, httpapi.ConfigUpdate{}, httpapi.ThresholdPreviewRequest{}, httpapi.ThresholdPreview{},
	httpapi.NoiseProjection{}, httpapi.ProjectionPoint{},
	httpapi.EmbedderInfo{}, httpapi.EmbedderQuery{}, httpapi.PullRequest{}, httpapi.ReembedRequest{}, httpapi.Job{},
	httpapi.SetupList{}, httpapi.SetupOptions{}, httpapi.SetupPreview{}, httpapi.SetupApplyRequest{},
	httpapi.SetupUndoRequest{}, httpapi.SetupResult{},
	httpapi.AutostartRequest{}, autostart.State{},
	httpapi.ExportFileRequest{}, httpapi.WelcomeState{},
	httpapi.ErrorBody{},
	httpapi.TeamStatus{}, httpapi.TeamPushReport{}, httpapi.TeamPullReport{}, httpapi.ScopeRequest{},
	httpapi.TeamSettings{}, httpapi.TeamSettingsUpdate{},
	httpapi.RecallLogCleared{},
	memory.Memory{}, memory.Hit{}, memory.Decision{}, memory.Exchange{}, memory.ScoreBreakdown{},
	search.RecallRequest{}, search.Recalled{}, search.RecallStats{}, search.SkillHit{},
	steward.Plan{}, steward.Action{}, steward.Result{}, steward.Snapshot{}, steward.Skip{}, steward.PlanOptions{}, steward.Run{},
	store.Info{}, store.TrashedMemory{}, store.ImportReport{}, store.RecallEntry{}, store.RecallLogStats{},
	events.Event{},
}

// names renames types whose Go names clash or are unexported.
var names = map[reflect.Type]string{
	reflect.TypeOf(httpapi.ErrorBody{}):      "ErrorBody",
	reflect.TypeOf(httpapi.Stats{}):          "Stats",
	reflect.TypeOf(config.Config{}):          "Config",
	reflect.TypeOf(autostart.State{}):        "AutostartState",
	reflect.TypeOf(calib.Value{}):            "Threshold",
	reflect.TypeOf(httpapi.TeamStatus{}):     "TeamStatus",
	reflect.TypeOf(config.Team{}):            "TeamConfig",
	reflect.TypeOf(httpapi.TeamPushReport{}): "TeamPushReport",
	reflect.TypeOf(httpapi.TeamPullReport{}): "TeamPullReport",
	reflect.TypeOf(httpapi.TeamSettings{}):   "TeamSettings",
	// Package setup's types keep the names the API gave them.
	reflect.TypeOf(setup.List{}):         "SetupList",
	reflect.TypeOf(setup.Agent{}):        "SetupClient",
	reflect.TypeOf(setup.FileStatus{}):   "SetupFileStatus",
	reflect.TypeOf(setup.PlanOptions{}):  "SetupOptions",
	reflect.TypeOf(setup.Preview{}):      "SetupPreview",
	reflect.TypeOf(setup.File{}):         "SetupFile",
	reflect.TypeOf(setup.FileHash{}):     "SetupFileHash",
	reflect.TypeOf(setup.ApplyRequest{}): "SetupApplyRequest",
	reflect.TypeOf(setup.UndoRequest{}):  "SetupUndoRequest",
	reflect.TypeOf(setup.Result{}):       "SetupResult",
	// Package importer's likewise.
	reflect.TypeOf(importer.Request{}):    "ImportClaudeRequest",
	reflect.TypeOf(importer.Counts{}):     "ImportClaudeCounts",
	reflect.TypeOf(importer.ItemReport{}): "ImportClaudeItem",
	reflect.TypeOf(importer.FileReport{}): "ImportClaudeFile",
	reflect.TypeOf(importer.Missing{}):    "ImportClaudeMissing",
	reflect.TypeOf(importer.Report{}):     "ImportClaudeReport",
}

// eventTypes maps the live feed's event names to their payload types.
var eventTypes = []struct {
	name    string
	payload any
}{
	{httpapi.EventDecision, httpapi.DecisionEntry{}},
	{httpapi.EventMemory, httpapi.MemoryEvent{}},
	{httpapi.EventCapture, httpapi.CaptureState{}},
	{httpapi.EventSteward, httpapi.StewardEvent{}},
	{httpapi.EventStats, httpapi.StatsEvent{}},
	{httpapi.EventPing, httpapi.PingEvent{}},
	{httpapi.EventReset, httpapi.ResetEvent{}},
	{httpapi.EventJob, httpapi.Job{}},
}

var (
	timeType     = reflect.TypeOf(time.Time{})
	rawType      = reflect.TypeOf(json.RawMessage{})
	durationType = reflect.TypeOf(config.Duration(0))
	stdDuration  = reflect.TypeOf(time.Duration(0))
)

// Command is how to regenerate the committed file.
const Command = "go run ./cmd/tsgen -o frontend/src/lib/api/types.ts"

func main() {
	out := flag.String("o", "", "write to this file (default: standard output)")
	flag.Parse()
	src := Generate()
	if *out == "" {
		os.Stdout.Write(src)
		return
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "tsgen:", err)
		os.Exit(1)
	}
}

type gen struct {
	decls map[string]string
	seen  map[reflect.Type]string
	queue []reflect.Type
}

// Generate returns the TypeScript source.
func Generate() []byte {
	g := &gen{decls: map[string]string{}, seen: map[reflect.Type]string{}}
	for _, r := range roots {
		g.name(reflect.TypeOf(r))
	}
	for _, e := range eventTypes {
		g.name(reflect.TypeOf(e.payload))
	}
	for len(g.queue) > 0 {
		t := g.queue[0]
		g.queue = g.queue[1:]
		g.decls[g.seen[t]] = g.decl(t)
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by cmd/tsgen from the Go API types. DO NOT EDIT.\n")
	b.WriteString("// Regenerate: " + Command + "\n\n")
	keys := make([]string, 0, len(g.decls))
	for k := range g.decls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(g.decls[k])
		b.WriteString("\n")
	}
	b.WriteString("/** The live feed's event names (GET /api/events) and their payloads. */\n")
	b.WriteString("export interface EventPayloads {\n")
	for _, e := range eventTypes {
		fmt.Fprintf(&b, "  %s: %s;\n", quoteKey(e.name), g.seen[reflect.TypeOf(e.payload)])
	}
	b.WriteString("}\n\n")
	b.WriteString("/** One live-feed event as the UI handles it. */\n")
	b.WriteString("export type FeedEvent = { [K in keyof EventPayloads]: { id?: number; type: K; data: EventPayloads[K] } }[keyof EventPayloads];\n\n")
	b.WriteString("/** Sort keys of GET /api/memories. */\n")
	fmt.Fprintf(&b, "export type ListSort = %s;\n", union(httpapi.ListSorts))
	return b.Bytes()
}

func union(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, " | ")
}

func quoteKey(s string) string {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}

// name returns the TypeScript name of a named struct, queueing it.
func (g *gen) name(t reflect.Type) string {
	if n, ok := g.seen[t]; ok {
		return n
	}
	n := names[t]
	if n == "" {
		n = t.Name()
		if other := g.byName(n); other != nil && other != t {
			n = pkgPrefix(t) + n
		}
	}
	g.seen[t] = n
	g.queue = append(g.queue, t)
	return n
}

func (g *gen) byName(n string) reflect.Type {
	for t, v := range g.seen {
		if v == n {
			return t
		}
	}
	return nil
}

func pkgPrefix(t reflect.Type) string {
	p := t.PkgPath()
	p = p[strings.LastIndex(p, "/")+1:]
	return strings.ToUpper(p[:1]) + p[1:]
}

// typ is the TypeScript type of t.
func (g *gen) typ(t reflect.Type) string {
	switch {
	case t == timeType, t == durationType:
		return "string"
	case t == rawType:
		return "unknown"
	case t == stdDuration:
		return "number"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.typ(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string"
		}
		el := g.typ(t.Elem())
		if strings.ContainsAny(el, " |") {
			el = "(" + el + ")"
		}
		return el + "[]"
	case reflect.Map:
		return "Record<string, " + g.typ(t.Elem()) + ">"
	case reflect.Interface:
		return "unknown"
	case reflect.Struct:
		if t.Name() == "" {
			return g.fields(t, "")
		}
		return g.name(t)
	}
	return "unknown"
}

func (g *gen) decl(t reflect.Type) string {
	return fmt.Sprintf("/** %s.%s */\nexport interface %s %s\n", t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:], t.Name(), g.seen[t], g.fields(t, ""))
}

type field struct {
	name, ts string
	opt      bool
}

// fields writes t's JSON fields as an object type body.
func (g *gen) fields(t reflect.Type, indent string) string {
	var fs []field
	g.collect(t, &fs, map[string]bool{})
	var b strings.Builder
	b.WriteString("{\n")
	for _, f := range fs {
		opt := ""
		if f.opt {
			opt = "?"
		}
		fmt.Fprintf(&b, "%s  %s%s: %s;\n", indent, quoteKey(f.name), opt, f.ts)
	}
	b.WriteString(indent + "}")
	return b.String()
}

// collect adds t's fields, flattening embedded structs as encoding/json does
// (an outer field of the same name wins).
func (g *gen) collect(t reflect.Type, out *[]field, have map[string]bool) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				embedded = append(embedded, et)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if have[name] {
			continue
		}
		have[name] = true
		opt := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		ts := g.typ(sf.Type)
		if strings.Contains(opts, "string") {
			ts = "string"
		}
		if sf.Type.Kind() == reflect.Pointer && !opt {
			ts += " | null"
		}
		*out = append(*out, field{name: name, ts: ts, opt: opt})
	}
	for _, et := range embedded {
		g.collect(et, out, have)
	}
}
