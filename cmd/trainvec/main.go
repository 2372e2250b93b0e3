// Command trainvec trains memtray's word vectors (backend/embed/wordvec)
// from a pinned list of Debian documentation packages with permissive
// licences and WordNet: it optionally installs the packages (-install),
// extracts English prose from their files in a fixed order, tokenizes it
// with the runtime's tokenizer, trains (counts, PPMI, randomized SVD, int8)
// and writes OUT/wordvec.bin and OUT/manifest.json (which records the
// model's gzipped size too). It also builds the WordNet thesaurus search
// expands queries with (OUT/thesaurus.txt; -thesaurus-only rebuilds just
// that). wordvec.bin and thesaurus.txt are what the binary embeds. The same package versions, parameters and
// seed give the same bytes. -more also reads moreSources, a larger
// permissive corpus the shipped model does not use (issue 22's experiment).
//
//	go run ./cmd/trainvec [-install] [-more] [-out DIR] [-dim 300] [-vocab 80000] [-seed 9]
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/memtray/memtray/backend/embed/wordvec"
)

// source is one pinned Debian package and how to read it.
type source struct {
	Package string `json:"package"`
	Version string `json:"version"`
	License string `json:"license"`
	// Root is the directory read; Kind says how ("html" or "wordnet").
	Root string `json:"root"`
	Kind string `json:"kind"`
	// Skip lists path fragments not read (indexes, generated source pages).
	Skip  []string `json:"skip,omitempty"`
	Files int      `json:"files"`
	Bytes int64    `json:"prose_bytes"`
}

// sources is the pinned corpus: every package's licence was checked in its
// /usr/share/doc/<package>/copyright (Debian 12).
var sources = []source{
	{Package: "python3.11-doc", License: "PSF-2.0", Root: "/usr/share/doc/python3.11/html", Kind: "html",
		Skip: []string{"genindex", "py-modindex", "/search.html", "/_static/", "/_sources/"}},
	{Package: "postgresql-doc-15", License: "PostgreSQL", Root: "/usr/share/doc/postgresql-doc-15/html", Kind: "html",
		Skip: []string{"bookindex", "release-"}},
	{Package: "sqlite3-doc", License: "public-domain", Root: "/usr/share/doc/sqlite3", Kind: "html",
		Skip: []string{"/releaselog/", "changes.html", "/c3ref/"}},
	{Package: "sphinx-doc", License: "BSD-2-clause", Root: "/usr/share/doc/sphinx-doc/html", Kind: "html",
		Skip: []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_downloads/", "/_sources/"}},
	{Package: "wordnet-base", License: "WordNet-3.0", Root: "/usr/share/wordnet", Kind: "wordnet"},
	{Package: "python-django-doc", License: "BSD-3-Clause", Root: "/usr/share/doc/python-django-doc/html", Kind: "html",
		Skip: []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_sources/"}},
	{Package: "python-flask-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-flask-doc/html", Kind: "html",
		Skip: []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_sources/"}},
	{Package: "python-sqlalchemy-doc", License: "Expat", Root: "/usr/share/doc/python-sqlalchemy-doc/html", Kind: "html",
		Skip: []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_sources/"}},
	{Package: "cmake-doc", License: "BSD-3-clause", Root: "/usr/share/doc/cmake-data/html", Kind: "html",
		Skip: []string{"genindex", "/search.html", "/_static/", "/_sources/"}},
	{Package: "llvm-15-doc", License: "Apache-2.0 WITH LLVM-exception", Root: "/usr/share/doc/llvm-15-doc/html", Kind: "html",
		Skip: []string{"/AMDGPU", "genindex", "/search.html", "/_static/", "/_sources/"}},
	{Package: "nodejs-doc", License: "Expat", Root: "/usr/share/doc/nodejs/api", Kind: "html"},
	{Package: "apache2-doc", License: "Apache-2.0", Root: "/usr/share/doc/apache2-doc/manual/en", Kind: "html"},
	{Package: "rust-doc", License: "MIT OR Apache-2.0", Root: "/usr/share/doc/rust-doc/html", Kind: "html",
		Skip: []string{"/core/", "/src/", "/unstable-book/", "/alloc/", "/test/", "/proc_macro/", "/std/arch/",
			"print.html", "/search-index", "/implementors/", "/static.files/", "/theme/"}},
	{Package: "python-sklearn-doc", License: "BSD-3-Clause", Root: "/usr/share/doc/python-sklearn-doc/html", Kind: "html",
		Skip: []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_sources/", "/_downloads/", "/_images/"}},
	{Package: "python-scipy-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-scipy-doc/html", Kind: "html",
		Skip: []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_sources/", "/_downloads/", "/_images/"}},
	{Package: "python-pandas-doc", License: "BSD-3", Root: "/usr/share/doc/python-pandas-doc/html", Kind: "html",
		Skip: []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_sources/", "/_downloads/", "/_images/"}},
	{Package: "python-celery-doc", License: "BSD-2-clause", Root: "/usr/share/doc/python-celery-doc/html", Kind: "html",
		Skip: []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_sources/", "/_downloads/", "/_images/"}},
	{Package: "python-pytest-doc", License: "Expat", Root: "/usr/share/doc/python-pytest-doc/html", Kind: "html",
		Skip: []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_sources/", "/_downloads/", "/_images/"}},
	{Package: "python-tornado-doc", License: "Apache-2.0", Root: "/usr/share/doc/python-tornado-doc/html", Kind: "html",
		Skip: []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_sources/", "/_downloads/", "/_images/"}},
	{Package: "erlang-doc", License: "Apache-2.0", Root: "/usr/share/doc/erlang-doc", Kind: "html"},
	{Package: "zsh-doc", License: "Zsh", Root: "/usr/share/doc/zsh-common/html", Kind: "html"},
	{Package: "dict-devil", License: "public-domain", Root: "/usr/share/dictd", Kind: "dictzip",
		Skip: []string{".index"}},
}

// moreSources are further permissively licensed documentation packages
// (issue 22: does a larger permissive corpus make better vectors?), read
// after sources with -more. Licences checked the same way (the Files: *
// stanza of each copyright file, Debian 12); left out as not permissive:
// python-psycopg2-doc (LGPL-3), and ruby3.1-doc (BSD-2-clause or Ruby, but
// shipped as ri data, not HTML). The shipped model does not use them: see
// docs/benchmarks.md, "The built-in embedder against its prototype".
var moreSources = []source{
	{Package: "libboost1.74-doc", License: "BSL-1.0", Root: "/usr/share/doc/libboost1.74-doc/doc/html", Kind: "html"},
	{Package: "clang-15-doc", License: "Apache-2.0 WITH LLVM-exception", Root: "/usr/share/doc/clang-15/html", Kind: "html", Skip: sphinxSkip},
	{Package: "golang-1.19-doc", License: "BSD-3-clause (Go)", Root: "/usr/share/doc/golang-1.19-doc/html", Kind: "html"},
	{Package: "python-werkzeug-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-werkzeug-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-jinja2-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-jinja2-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-click-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-click-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-kombu-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-kombu-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-ipython-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-ipython-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-notebook-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-notebook-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-biopython-doc", License: "Biopython or BSD-3-clause", Root: "/usr/share/doc/python-biopython-doc/Doc", Kind: "html"},
	{Package: "python-dask-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-dask-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-distributed-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-distributed-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-xarray-doc", License: "Apache-2.0", Root: "/usr/share/doc/python-xarray-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-tables-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-tables-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-scrapy-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-scrapy-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-lxml-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-lxml/html", Kind: "html"},
	{Package: "python-requests-doc", License: "Apache-2.0", Root: "/usr/share/doc/python-requests-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-attr-doc", License: "Expat", Root: "/usr/share/doc/python-attr-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-cryptography-doc", License: "Apache-2.0 OR BSD-3-clause", Root: "/usr/share/doc/python-cryptography-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "cython-doc", License: "Apache-2.0", Root: "/usr/share/doc/cython-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-aiohttp-doc", License: "Apache-2.0", Root: "/usr/share/doc/python-aiohttp-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-setuptools-doc", License: "Expat", Root: "/usr/share/doc/python-setuptools-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-sympy-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-sympy-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-djangorestframework-doc", License: "BSD-2-clause", Root: "/usr/share/doc/python3-djangorestframework/html", Kind: "html"},
	{Package: "python-mako-doc", License: "Expat", Root: "/usr/share/doc/python-mako-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-pymongo-doc", License: "Apache-2.0", Root: "/usr/share/doc/python-pymongo-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-peewee-doc", License: "Expat", Root: "/usr/share/doc/python-peewee-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-pil-doc", License: "HPND (PIL)", Root: "/usr/share/doc/python-pil-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-pygments-doc", License: "BSD-2-clause", Root: "/usr/share/doc/python-pygments-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-h5py-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-h5py-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-mpmath-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-mpmath-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-pyparsing-doc", License: "Expat", Root: "/usr/share/doc/python-pyparsing-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-black-doc", License: "Expat", Root: "/usr/share/doc/python-black-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-bs4-doc", License: "Expat", Root: "/usr/share/doc/python-bs4-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-cherrypy3-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-cherrypy3-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-nbconvert-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-nbconvert-doc/html", Kind: "html", Skip: sphinxSkip},
	{Package: "python-jupyter-client-doc", License: "BSD-3-clause", Root: "/usr/share/doc/python-jupyter-client-doc/html", Kind: "html", Skip: sphinxSkip},
}

// sphinxSkip is what a Sphinx build's HTML has besides prose pages.
var sphinxSkip = []string{"/_modules/", "genindex", "py-modindex", "/search.html", "/_static/", "/_sources/", "/_downloads/", "/_images/"}

// ThesaurusInfo describes the thesaurus built from WordNet.
type ThesaurusInfo struct {
	Source  string `json:"source"`
	License string `json:"license"`
	Senses  int    `json:"senses"`
	Entries int    `json:"entries"`
	SHA256  string `json:"sha256"`
	Bytes   int    `json:"bytes"`
	Gzip    int    `json:"gzip_bytes"`
}

// Manifest describes a trained model.
type Manifest struct {
	Format       string          `json:"format"`
	Sources      []source        `json:"sources"`
	CorpusSHA256 string          `json:"corpus_sha256"`
	Params       wordvec.Params  `json:"params"`
	Stats        wordvec.Stats   `json:"stats"`
	ModelSHA256  string          `json:"model_sha256"`
	ModelBytes   int             `json:"model_bytes"`
	GzipBytes    int             `json:"gzip_bytes"`
	Tokenizer    string          `json:"tokenizer"`
	Thesaurus    *ThesaurusInfo  `json:"thesaurus,omitempty"`
	Extra        json.RawMessage `json:"extra,omitempty"`
}

func main() {
	if err := run(); err != nil {
		slog.Error("trainvec", "err", err)
		os.Exit(1)
	}
}

func run() error {
	p := wordvec.DefaultParams()
	out := flag.String("out", "backend/embed/wordvec/model", "output directory")
	install := flag.Bool("install", false, "install the pinned packages with apt-get first")
	extractOnly := flag.Bool("extract-only", false, "stop after reading the corpus")
	thesaurusOnly := flag.Bool("thesaurus-only", false, "only rebuild the thesaurus (and its manifest entry)")
	senses := flag.Int("senses", 3, "WordNet senses per part of speech the thesaurus keeps")
	dumpCorpus := flag.String("dump-corpus", "", "also write the extracted prose to this file")
	more := flag.Bool("more", false, "also read moreSources after the pinned sources (not in the shipped model)")
	flag.IntVar(&p.Dim, "dim", p.Dim, "vector dimensions")
	flag.IntVar(&p.MaxVocab, "vocab", p.MaxVocab, "vocabulary size")
	flag.IntVar(&p.MinCount, "min-count", p.MinCount, "minimum word count")
	flag.IntVar(&p.Window, "window", p.Window, "context window")
	flag.IntVar(&p.PowerIters, "power-iters", p.PowerIters, "randomized SVD power iterations")
	flag.Uint64Var(&p.Seed, "seed", p.Seed, "random seed")
	flag.IntVar(&p.Workers, "workers", runtime.NumCPU(), "parallel workers (the result does not depend on it)")
	flag.Parse()
	if err := p.Validate(); err != nil {
		return err
	}
	pinned := sources
	if *more {
		pinned = slices.Concat(sources, moreSources)
	}
	if *install {
		if err := installPackages(pinned); err != nil {
			return err
		}
	}
	if *thesaurusOnly {
		return writeThesaurus(*out, *senses, nil)
	}
	start := time.Now()
	corpus := wordvec.NewCorpus()
	h := sha256.New()
	var dump *os.File
	if *dumpCorpus != "" {
		var err error
		if dump, err = os.Create(*dumpCorpus); err != nil {
			return fmt.Errorf("dump corpus: %w", err)
		}
		defer dump.Close()
	}
	srcs := slices.Clone(pinned)
	for i := range srcs {
		s := &srcs[i]
		v, err := packageVersion(s.Package)
		if err != nil {
			return err
		}
		s.Version = v
		err = readSource(s, func(doc string) {
			h.Write([]byte(doc))
			h.Write([]byte{0})
			if dump != nil {
				dump.WriteString(doc)
				dump.WriteString("\n\n")
			}
			corpus.Add(doc)
			s.Bytes += int64(len(doc))
		})
		if err != nil {
			return fmt.Errorf("read %s: %w", s.Package, err)
		}
		slog.Info("source read", "package", s.Package, "version", s.Version, "files", s.Files,
			"prose_bytes", s.Bytes, "tokens_so_far", corpus.Tokens())
	}
	slog.Info("corpus", "tokens", corpus.Tokens(), "types", corpus.Types(), "sha256", hex.EncodeToString(h.Sum(nil)),
		"elapsed", time.Since(start).Round(time.Millisecond))
	if *extractOnly {
		return nil
	}
	model, st, err := wordvec.Train(corpus, p)
	if err != nil {
		return err
	}
	slog.Info("trained", "vocab", st.Vocab, "pairs", st.Pairs, "ppmi_nonzero", st.NonZero,
		"top_singular", st.TopSingle, "elapsed", time.Since(start).Round(time.Millisecond), "peak_rss", peakRSS())
	var bin bytes.Buffer
	if _, err := model.WriteTo(&bin); err != nil {
		return err
	}
	gz, err := gzipBytes(bin.Bytes())
	if err != nil {
		return err
	}
	sum := sha256.Sum256(bin.Bytes())
	man := Manifest{Format: fmt.Sprintf("%s v%d", wordvec.Magic, wordvec.Version), Sources: srcs,
		CorpusSHA256: hex.EncodeToString(h.Sum(nil)), Params: p, Stats: st,
		ModelSHA256: hex.EncodeToString(sum[:]), ModelBytes: bin.Len(), GzipBytes: gz.Len(),
		Tokenizer: "wordvec.Tokens (lowercased words, identifiers split as in backend/embed; digits-only and >40-byte parts dropped)"}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	if err := os.WriteFile(filepath.Join(*out, "wordvec.bin"), bin.Bytes(), 0o644); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	slog.Info("written", "dir", *out, "model_bytes", bin.Len(), "gzip_bytes", gz.Len(),
		"elapsed", time.Since(start).Round(time.Millisecond), "peak_rss", peakRSS())
	return writeThesaurus(*out, *senses, &man)
}

// writeThesaurus builds the thesaurus from the installed wordnet-base,
// writes OUT/thesaurus.txt (uncompressed: the binary reads it in place; the
// manifest still records its gzip size) and records it in the manifest: man, or the
// one already in OUT when man is nil.
func writeThesaurus(out string, senses int, man *Manifest) error {
	if man == nil {
		b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
		if err != nil {
			return fmt.Errorf("manifest: %w (train the vectors first)", err)
		}
		man = &Manifest{}
		if err := json.Unmarshal(b, man); err != nil {
			return fmt.Errorf("manifest: %w", err)
		}
	}
	var wn *source
	for i := range sources {
		if sources[i].Kind == "wordnet" {
			wn = &sources[i]
		}
	}
	v, err := packageVersion(wn.Package)
	if err != nil {
		return err
	}
	th, err := wordvec.BuildThesaurus(func(name string) (io.ReadCloser, error) {
		return os.Open(filepath.Join(wn.Root, name))
	}, senses)
	if err != nil {
		return err
	}
	var txt bytes.Buffer
	if _, err := th.WriteTo(&txt); err != nil {
		return err
	}
	gz, err := gzipBytes(txt.Bytes())
	if err != nil {
		return err
	}
	sum := sha256.Sum256(txt.Bytes())
	man.Thesaurus = &ThesaurusInfo{Source: wn.Package + " " + v, License: wn.License, Senses: senses,
		Entries: th.Len(), SHA256: hex.EncodeToString(sum[:]), Bytes: txt.Len(), Gzip: gz.Len()}
	mj, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	for name, data := range map[string][]byte{"thesaurus.txt": txt.Bytes(), "manifest.json": append(mj, '\n')} {
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return fmt.Errorf("output: %w", err)
		}
	}
	slog.Info("thesaurus written", "entries", th.Len(), "bytes", txt.Len(), "gzip_bytes", gz.Len())
	return nil
}

// packageVersion returns the installed version of a Debian package.
func packageVersion(pkg string) (string, error) {
	v, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil || len(v) == 0 {
		return "", fmt.Errorf("package %s is not installed (run with -install): %v", pkg, err)
	}
	return string(v), nil
}

// gzipBytes compresses b at the best level with an empty header (no name,
// no time), so the same input gives the same bytes.
func gzipBytes(b []byte) (*bytes.Buffer, error) {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if _, err := zw.Write(b); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return &gz, nil
}

// installPackages installs the packages of srcs with apt-get (through sudo
// when not root).
func installPackages(srcs []source) error {
	args := []string{"-o", "DPkg::Lock::Timeout=300", "install", "-y", "--no-install-recommends"}
	for _, s := range srcs {
		args = append(args, s.Package)
	}
	name := "apt-get"
	if os.Geteuid() != 0 {
		args = append([]string{name}, args...)
		name = "sudo"
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("install packages: %w", err)
	}
	return nil
}

// peakRSS returns the process's peak resident set size from /proc ("" if
// unknown).
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return ""
}

// readSource calls fn with each document of s, files in sorted path order.
func readSource(s *source, fn func(doc string)) error {
	var paths []string
	err := filepath.WalkDir(s.Root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		for _, sk := range s.Skip {
			if strings.Contains(path, sk) {
				return nil
			}
		}
		switch s.Kind {
		case "html":
			if strings.HasSuffix(path, ".html") {
				paths = append(paths, path)
			}
		case "dictzip":
			if strings.HasSuffix(path, ".dict.dz") && strings.Contains(path, "devil") {
				paths = append(paths, path)
			}
		case "wordnet":
			if base := filepath.Base(path); strings.HasPrefix(base, "data.") {
				paths = append(paths, path)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return errors.New("no files found")
	}
	slices.Sort(paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s.Files++
		var doc string
		switch s.Kind {
		case "html":
			doc = HTMLProse(string(b))
		case "dictzip":
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			raw, err := io.ReadAll(zr)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			doc = DictProse(string(raw))
		default:
			doc = WordNetGlosses(string(b))
		}
		if doc != "" {
			fn(doc)
		}
	}
	return nil
}

var (
	reDrop  = regexp.MustCompile(`(?is)<(script|style|pre|head|nav|footer|header)\b.*?</(script|style|pre|head|nav|footer|header)\s*>|<!--.*?-->`)
	reDiv   = regexp.MustCompile(`(?is)<div class="(highlight[^"]*|related|sphinxsidebar[^"]*|footer|navheader|navfooter|toc)"`)
	reSpace = regexp.MustCompile(`\s+`)
	reBlock = regexp.MustCompile(`(?i)</?(p|div|li|ul|ol|dd|dt|dl|h[1-6]|tr|td|th|table|br|section|blockquote|caption|figcaption|title)\b[^>]*>`)
	reTag   = regexp.MustCompile(`(?s)<[^>]*>`)
)

// HTMLProse extracts English prose from an HTML page: the main content
// (Sphinx's div.body when present), without scripts, styles, preformatted
// code, navigation and comments, one block per line; lines that do not look
// like prose (fewer than five words, mostly non-letters) are dropped.
func HTMLProse(page string) string {
	if i := strings.Index(page, `<div class="body" role="main">`); i >= 0 {
		page = page[i:]
		if j := strings.Index(page, `<div class="sphinxsidebar"`); j >= 0 {
			page = page[:j]
		}
	}
	page = reDrop.ReplaceAllString(page, " ")
	page = reSpace.ReplaceAllString(page, " ")
	page = reBlock.ReplaceAllString(page, "\n")
	page = reTag.ReplaceAllString(page, "")
	page = html.UnescapeString(page)
	var out strings.Builder
	for _, line := range strings.Split(page, "\n") {
		line = strings.TrimSpace(line)
		if proseLike(line) {
			out.WriteString(line)
			out.WriteByte('\n')
		}
	}
	return out.String()
}

// proseLike reports whether a line has at least five words and mostly
// letters and spaces.
func proseLike(line string) bool {
	if len(strings.Fields(line)) < 5 {
		return false
	}
	var letters, other int
	for _, r := range line {
		switch {
		case unicode.IsLetter(r) || r == ' ':
			letters++
		default:
			other++
		}
	}
	return letters >= 4*other
}

// WordNetGlosses turns a WordNet data file into one line per synset: its
// words (underscores as spaces), then its gloss (definition and examples).
func WordNetGlosses(data string) string {
	var out strings.Builder
	for _, line := range strings.Split(data, "\n") {
		if line == "" || line[0] == ' ' {
			continue // licence header
		}
		bar := strings.Index(line, " | ")
		if bar < 0 {
			continue
		}
		f := strings.Fields(line[:bar])
		if len(f) < 4 {
			continue
		}
		var n int
		fmt.Sscanf(f[3], "%x", &n)
		var words []string
		for k := 0; k < n && 4+2*k < len(f); k++ {
			w := f[4+2*k]
			if i := strings.IndexByte(w, '('); i > 0 {
				w = w[:i] // adjective markers: "galore(ip)"
			}
			words = append(words, strings.ReplaceAll(w, "_", " "))
		}
		out.WriteString(strings.Join(words, ", "))
		out.WriteString(": ")
		out.WriteString(strings.TrimSpace(line[bar+3:]))
		out.WriteByte('\n')
	}
	return out.String()
}

// DictProse turns a dictd database into prose lines: runs of text joined
// within a paragraph, paragraphs (blank lines) apart, short lines dropped.
func DictProse(data string) string {
	var out strings.Builder
	for _, para := range strings.Split(data, "\n\n") {
		line := strings.Join(strings.Fields(para), " ")
		if proseLike(line) {
			out.WriteString(line)
			out.WriteByte('\n')
		}
	}
	return out.String()
}
