// Command soakreport prints the summary table of `make soak`
// (docs/reliability.md) from the result files the soak's parts write, and makes
// result files for parts that cannot write their own.
//
// A result file is <dir>/<name>.json holding one JSON object per line
// (usually one line):
//
//	{"name":"crash","metric":"kills survived","value":400,"ok":true,"detail":"400 of 400: ..."}
//
// name is the part that wrote it; metric is the table's row; value is a
// number or a short text; ok says whether the part passed; detail is one
// line for the reader. The table has a row for each metric of Metrics, in
// that order, then any other metric met; a metric no file reports is "not
// run". Rows of one metric from several parts add up (numbers) or are
// listed (texts); the row is ok when every part's is.
//
//	soakreport [-dir DIR] [-expect crash,fuzz] [-markdown]
//	    print the table of DIR ($SOAK_OUT, else bin/soak); exit 1 when a
//	    row is not ok or an expected part wrote nothing
//	soakreport record -out FILE -name N -metric M -value V -ok=BOOL [-detail D]
//	    append one result to FILE (for a part run from a script)
//	soakreport fuzz -log FILE -before FILE -out FILE
//	    turn the output of `make -i fuzz` into the fuzz rows: executions
//	    (the last "execs:" count of every target) and crashers (files new
//	    in testdata/fuzz since the list -before, which go test -fuzz
//	    writes for every failing input)
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Metrics are the table's rows, in order.
var Metrics = []string{
	"kills survived",
	"faults survived",
	"fuzz executions",
	"fuzz crashers",
	"load held",
	"secrets leaked",
	"memories lost",
}

// Result is one line of a result file.
type Result struct {
	Name   string `json:"name"`
	Metric string `json:"metric"`
	// Value is a JSON number or string.
	Value  json.RawMessage `json:"value"`
	OK     bool            `json:"ok"`
	Detail string          `json:"detail,omitempty"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var err error
	code := 0
	switch {
	case len(args) > 0 && args[0] == "record":
		err = record(args[1:])
	case len(args) > 0 && args[0] == "fuzz":
		err = fuzz(args[1:], ".")
	default:
		code, err = table(args, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "soakreport:", err)
		return 2
	}
	return code
}

// table prints the summary table of a results dir.
func table(args []string, w io.Writer) (int, error) {
	fl := flag.NewFlagSet("soakreport", flag.ContinueOnError)
	dir := fl.String("dir", cmpOr(os.Getenv("SOAK_OUT"), "bin/soak"), "results dir")
	expect := fl.String("expect", "", "comma-separated parts that must have written a result")
	md := fl.Bool("markdown", false, "print a Markdown table")
	if err := fl.Parse(args); err != nil {
		return 0, err
	}
	results, err := readDir(*dir)
	if err != nil {
		return 0, err
	}
	rows := summarize(results)
	ok := true
	seen := map[string]bool{}
	for _, r := range results {
		seen[r.Name] = true
	}
	var missing []string
	for _, name := range strings.Split(*expect, ",") {
		if name = strings.TrimSpace(name); name != "" && !seen[name] {
			missing = append(missing, name)
		}
	}
	for _, r := range rows {
		if r.run && !r.ok {
			ok = false
		}
	}
	if *md {
		fmt.Fprintln(w, "| Check | Result | OK | From | Detail |")
		fmt.Fprintln(w, "|---|---|---|---|---|")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.metric, r.value, r.okText(), r.from, strings.ReplaceAll(r.detail, "|", "\\|"))
		}
	} else {
		fmt.Fprintf(w, "memtray soak: %d results from %s\n", len(results), *dir)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CHECK\tRESULT\tOK\tFROM\tDETAIL")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.metric, r.value, r.okText(), r.from, r.detail)
		}
		tw.Flush()
	}
	if len(missing) > 0 {
		fmt.Fprintf(w, "no result from: %s\n", strings.Join(missing, ", "))
		ok = false
	}
	if !ok {
		return 1, nil
	}
	return 0, nil
}

// row is one line of the table.
type row struct {
	metric, value, from, detail string
	ok, run                     bool
}

func (r row) okText() string {
	switch {
	case !r.run:
		return "-"
	case r.ok:
		return "yes"
	}
	return "NO"
}

// summarize makes the table's rows: Metrics first, then the others met.
func summarize(results []Result) []row {
	order := slices.Clone(Metrics)
	by := map[string][]Result{}
	for _, r := range results {
		if !slices.Contains(order, r.Metric) {
			order = append(order, r.Metric)
		}
		by[r.Metric] = append(by[r.Metric], r)
	}
	var rows []row
	for _, m := range order {
		rs := by[m]
		if len(rs) == 0 {
			rows = append(rows, row{metric: m, value: "not run"})
			continue
		}
		r := row{metric: m, ok: true, run: true}
		var sum float64
		numeric := true
		var texts, names, details []string
		for _, x := range rs {
			r.ok = r.ok && x.OK
			names = append(names, x.Name)
			if x.Detail != "" {
				details = append(details, x.Name+": "+x.Detail)
			}
			var n float64
			if err := json.Unmarshal(x.Value, &n); err == nil {
				sum += n
				texts = append(texts, strconv.FormatFloat(n, 'f', -1, 64))
				continue
			}
			numeric = false
			var s string
			if err := json.Unmarshal(x.Value, &s); err == nil {
				texts = append(texts, s)
			} else {
				texts = append(texts, string(x.Value))
			}
		}
		if numeric {
			r.value = strconv.FormatFloat(sum, 'f', -1, 64)
		} else {
			r.value = strings.Join(texts, ", ")
		}
		slices.Sort(names)
		r.from = strings.Join(slices.Compact(names), "+")
		r.detail = strings.Join(details, "; ")
		rows = append(rows, r)
	}
	return rows
}

// readDir reads every *.json of dir as result lines, checking each.
func readDir(dir string) ([]Result, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []Result
	for _, f := range files {
		rs, err := readFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// readFile reads one result file: one JSON object a line, each with a
// name, a metric and a number or text value.
func readFile(path string) ([]Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Result
	for i, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var r Result
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		if err := r.check(); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// check validates a result.
func (r Result) check() error {
	var problems []string
	if strings.TrimSpace(r.Name) == "" {
		problems = append(problems, "no name")
	}
	if strings.TrimSpace(r.Metric) == "" {
		problems = append(problems, "no metric")
	}
	var n float64
	var s string
	if json.Unmarshal(r.Value, &n) != nil && json.Unmarshal(r.Value, &s) != nil {
		problems = append(problems, "value is neither a number nor a string")
	}
	if strings.ContainsAny(r.Detail, "\n\r") {
		problems = append(problems, "detail spans lines")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, ", "))
	}
	return nil
}

// record appends one result to a file.
func record(args []string) error {
	fl := flag.NewFlagSet("soakreport record", flag.ContinueOnError)
	out := fl.String("out", "", "result file to append to")
	var r Result
	fl.StringVar(&r.Name, "name", "", "the part")
	fl.StringVar(&r.Metric, "metric", "", "the table's row")
	value := fl.String("value", "", "a number, or a text")
	fl.BoolVar(&r.OK, "ok", false, "whether the part passed")
	fl.StringVar(&r.Detail, "detail", "", "one line for the reader")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("record: -out is required")
	}
	if _, err := strconv.ParseFloat(*value, 64); err == nil {
		r.Value = json.RawMessage(*value)
	} else {
		r.Value, _ = json.Marshal(*value)
	}
	return appendResults(*out, r)
}

func appendResults(path string, rs ...Result) error {
	var b bytes.Buffer
	for _, r := range rs {
		if err := r.check(); err != nil {
			return err
		}
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var (
	execsRE   = regexp.MustCompile(`^fuzz: elapsed: \S+, execs: (\d+) `)
	endRE     = regexp.MustCompile(`^(ok|FAIL)\s+(\S+)`)
	failRE    = regexp.MustCompile(`^--- FAIL: (Fuzz\S*)`)
	writtenRE = regexp.MustCompile(`Failing input written to (\S+)`)
)

// fuzzLog is what a `make -i fuzz` log says.
type fuzzLog struct {
	targets, failed int
	execs           int64
	failures        []string // target (package) of failing runs
	written         []string // failing inputs the log names
	// flaked lists the runs that failed with Go's own "context deadline
	// exceeded" at the end of -fuzztime and wrote no input: a race in the
	// fuzzing coordinator (go.dev/issue/75804, fixed in Go 1.27), not a
	// finding; they count as run.
	flaked []string
}

// parseFuzzLog reads a fuzz log: each target's run ends with "ok pkg" or
// "FAIL pkg"; its execution count is the last "execs:" line before that.
func parseFuzzLog(r io.Reader) (fuzzLog, error) {
	var fl fuzzLog
	var last int64
	target := ""
	deadline, wrote := false, false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := execsRE.FindStringSubmatch(line); m != nil {
			last, _ = strconv.ParseInt(m[1], 10, 64)
			continue
		}
		if m := failRE.FindStringSubmatch(line); m != nil && target == "" {
			target = m[1]
			continue
		}
		if strings.TrimSpace(line) == "context deadline exceeded" {
			deadline = true
			continue
		}
		if m := writtenRE.FindStringSubmatch(line); m != nil {
			fl.written = append(fl.written, m[1])
			wrote = true
			continue
		}
		if m := endRE.FindStringSubmatch(line); m != nil {
			fl.targets++
			fl.execs += last
			name := strings.TrimSpace(target + " " + m[2])
			switch {
			case m[1] == "FAIL" && deadline && !wrote && target != "":
				fl.flaked = append(fl.flaked, name)
			case m[1] == "FAIL":
				fl.failed++
				fl.failures = append(fl.failures, name)
			}
			last, target, deadline, wrote = 0, "", false, false
		}
	}
	return fl, sc.Err()
}

// corpusFiles lists the files under every testdata/fuzz folder below
// root, relative to it.
func corpusFiles(root string) (map[string]bool, error) {
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.Contains(filepath.ToSlash(p), "/testdata/fuzz/") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return out, err
}

// fuzz writes the fuzz rows of a soak.
func fuzz(args []string, root string) error {
	fl := flag.NewFlagSet("soakreport fuzz", flag.ContinueOnError)
	logPath := fl.String("log", "", "output of `make -i fuzz`")
	before := fl.String("before", "", "the corpus files before the run, one path a line (find . -path '*/testdata/fuzz/*' -type f)")
	out := fl.String("out", "", "result file to write")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *logPath == "" || *before == "" || *out == "" {
		return errors.New("fuzz: -log, -before and -out are required")
	}
	f, err := os.Open(*logPath)
	if err != nil {
		return err
	}
	lg, err := parseFuzzLog(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("read %s: %w", *logPath, err)
	}
	data, err := os.ReadFile(*before)
	if err != nil {
		return err
	}
	had := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			had[filepath.ToSlash(filepath.Clean(l))] = true
		}
	}
	now, err := corpusFiles(root)
	if err != nil {
		return err
	}
	var crashers []string
	for p := range now {
		if !had[p] {
			crashers = append(crashers, p)
		}
	}
	slices.Sort(crashers)
	execDetail := fmt.Sprintf("%d fuzz targets run, %d failed", lg.targets, lg.failed)
	if len(lg.failures) > 0 {
		execDetail += ": " + strings.Join(lg.failures, ", ")
	}
	if len(lg.flaked) > 0 {
		execDetail += fmt.Sprintf("; %d stopped with Go's \"context deadline exceeded\" at the end of -fuzztime and no input (go.dev/issue/75804, not a finding): %s",
			len(lg.flaked), strings.Join(lg.flaked, ", "))
	}
	crashDetail := "no failing input"
	if len(crashers) > 0 {
		crashDetail = "kept as regression inputs: " + strings.Join(crashers, ", ")
	} else if lg.failed > 0 {
		crashDetail = "no new input file, but targets failed (see the executions row)"
	}
	os.Remove(*out)
	return appendResults(*out,
		Result{Name: "fuzz", Metric: "fuzz executions", Value: json.RawMessage(strconv.FormatInt(lg.execs, 10)),
			OK: lg.failed == 0 && lg.targets > 0, Detail: execDetail},
		Result{Name: "fuzz", Metric: "fuzz crashers", Value: json.RawMessage(strconv.Itoa(len(crashers))),
			OK: len(crashers) == 0 && lg.failed == 0, Detail: crashDetail})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
