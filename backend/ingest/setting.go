package ingest

import (
	"path"
	"regexp"
	"strings"
)

// What a setting is, for the removals a patch makes (glossdiff.go). A line
// sets a key only in a file that holds settings, as the file's path says:
//
//   - a configuration file (settingsData): YAML, TOML, JSON, INI, an env
//     file, Java properties, HCL, a Dockerfile, a Makefile, an rc file.
//     Every key its format writes is a setting: "key:" (YAML), "key =" or
//     "KEY=" (TOML, INI, env, properties, HCL, a Makefile's ":=" "?=" "+="),
//     a quoted key ("\"strict\": true", JSON), "export KEY=", a Dockerfile's
//     "ENV KEY=value" and "ARG KEY".
//   - a program named or placed as configuration (settingsConfigCode):
//     config/dev.exs, vite.config.ts, settings.py. Its keyword or field
//     ("sampler: {...}", "port: 3000,") is a setting; an assignment only
//     of a literal ("DEBUG = True", "timeout = 30"): "ratio =
//     String.to_float(...)" computes, it sets nothing.
//   - any other program or script (settingsCode): no key. "x = foo()" in a
//     .py, .go or .ts file, a JS object's field, a shell variable are code;
//     only "export KEY=" in a shell script sets the environment.
//   - documentation (.md, .rst, .txt...: settingsNone): nothing, not even
//     a YAML example in a README.
//
// In any file but documentation and a language whose comments open with
// "--" (SQL, Lua, Haskell), a line opening with a long CLI flag, bare or
// quoted ("--no-cache \", "\"--headless\","), sets the flag (its key keeps
// the dashes, as a gloss names it: "`--no-cache`").

// settingsKind is what the lines of a file can set, by its path.
type settingsKind uint8

const (
	settingsNone       settingsKind = iota // documentation: nothing
	settingsCode                           // a program: CLI flags (and a script's exports)
	settingsConfigCode                     // a program read as configuration: keys, literal assignments
	settingsData                           // a configuration file: every key
)

// dataExts are the extensions of configuration files.
var dataExts = map[string]bool{
	"yml": true, "yaml": true, "toml": true, "json": true, "jsonc": true, "json5": true,
	"ini": true, "cfg": true, "conf": true, "cnf": true, "properties": true, "env": true,
	"hcl": true, "tf": true, "tfvars": true, "mk": true, "editorconfig": true, "dockerfile": true,
}

// dataNames are configuration files by their whole name (lowered).
var dataNames = map[string]bool{"dockerfile": true, "containerfile": true, "makefile": true, "gnumakefile": true, "procfile": true}

// docExts are the extensions of documentation: no line of it sets anything.
var docExts = map[string]bool{
	"md": true, "mdx": true, "markdown": true, "rst": true, "txt": true, "adoc": true,
	"org": true, "html": true, "htm": true, "tex": true, "mdc": true,
}

// dashCommentExts are the languages whose comments open with "--": a line
// opening with "--x" is a comment there, no flag.
var dashCommentExts = map[string]bool{"sql": true, "lua": true, "hs": true, "elm": true, "ada": true, "adb": true, "ads": true}

// shellExts are scripts whose "export KEY=value" sets the environment.
var shellExts = map[string]bool{"sh": true, "bash": true, "zsh": true, "ksh": true, "fish": true}

// configStem names a program that is configuration by its name, without
// its extension: config, settings, conf, configuration, or a name ending
// in .config / _config / -config / _settings (vite.config, app_settings).
var configStem = regexp.MustCompile(`^(?:config|configs|settings|conf|configuration)$|[._-](?:config|conf|settings)$`)

// configDirs are directories whose programs are configuration (Elixir's
// config/, Django's settings/).
var configDirs = map[string]bool{"config": true, "configs": true, "conf": true, "settings": true}

// fileSettings returns what the lines of the file at p can set.
func fileSettings(p string) settingsKind {
	p = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(p), "\\", "/"))
	base := path.Base(p)
	ext, stem := "", base
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		ext, stem = base[i+1:], base[:i]
	} else if i == 0 {
		ext = base[1:] // a dotfile: .env, .editorconfig, .npmrc
	}
	switch {
	case docExts[ext]:
		return settingsNone
	case dataExts[ext] || dataNames[base] || dataNames[stem] || ext == "env" || strings.HasPrefix(base, ".env") ||
		strings.HasPrefix(base, "dockerfile") || strings.HasPrefix(base, ".") && strings.HasSuffix(base, "rc"):
		return settingsData
	case configStem.MatchString(stem):
		return settingsConfigCode
	}
	for _, d := range strings.Split(path.Dir(p), "/") {
		if configDirs[d] {
			return settingsConfigCode
		}
	}
	return settingsCode
}

// quotedKey is a key in quotes: a name (letters, digits, _ . - @ / $), not
// a pattern or a sentence ("^[a-z]+$" keys a JSON schema's pattern).
const quotedKey = `[A-Za-z_@$][\w.@/$-]*`

var (
	// dataKey is a key a configuration file's line sets, after
	// indentation and a list marker, an "export" before it or none:
	// quoted, then ":" or "=" (JSON writes "key":value); bare, then ":"
	// before a space or the line's end (YAML: "a:b" is a value), or "="
	// (":=", "?=", "+=": a Makefile's).
	dataKey = regexp.MustCompile(`^\s*(?:-\s+)?(?:export\s+)?(?:"(` + quotedKey + `)"\s*[:=]|'(` + quotedKey + `)'\s*[:=]|([A-Za-z_][\w.-]*)\s*(?:[:?+]?=|:(?:\s|$)))`)
	// dockerKey is a Dockerfile's ENV or ARG and its key.
	dockerKey = regexp.MustCompile(`^\s*(?i:ENV|ARG)\s+([A-Za-z_][\w.-]*)`)
	// fieldKey is a keyword or a field in a program (name: value,
	// "name":value).
	fieldKey = regexp.MustCompile(`^\s*(?:"(` + quotedKey + `)"\s*:|'(` + quotedKey + `)'\s*:|([A-Za-z_][\w.-]*)\s*:(?:\s|$))`)
	// literalAssign is an assignment of a literal in a program: a number,
	// a boolean, none, a quoted string, an atom, and nothing else but a
	// comma or a comment after it.
	literalAssign = regexp.MustCompile(`^\s*([A-Za-z_][\w.]*)\s*=\s*(?i:-?\d[\d._]*|true|false|nil|null|none|"[^"]*"|'[^']*'|:\w+)\s*[,;]?\s*(?:(?:#|//).*)?$`)
	// exportKey is a shell script's export of a variable.
	exportKey = regexp.MustCompile(`^\s*export\s+([A-Za-z_]\w*)=`)
	// flagKey is a line opening with a long CLI flag, bare or quoted.
	flagKey = regexp.MustCompile(`^\s*["']?(--[A-Za-z][\w.-]*)(?:[=\s"',\\]|$)`)
)

// settingFile is what the lines of one file can set, read from its path
// once for all of them.
type settingFile struct {
	kind  settingsKind // fileSettings
	flags bool         // a line opening with "--x" is a flag, no comment
	shell bool         // a script: "export KEY=" sets the environment
}

// settingFileOf returns what the lines of the file at p can set.
func settingFileOf(p string) settingFile {
	ext := strings.TrimPrefix(path.Ext(strings.ToLower(strings.TrimSpace(p))), ".")
	return settingFile{kind: fileSettings(p), flags: !dashCommentExts[ext], shell: shellExts[ext]}
}

// settingKey returns the key a line of the file at p sets, as the file's
// kind says (fileSettings); "" for none.
func settingKey(p, line string) string { return settingFileOf(p).key(line) }

// key returns the key line sets in f; "" for none.
func (f settingFile) key(line string) string {
	if f.kind == settingsNone {
		return ""
	}
	if f.flags {
		if m := flagKey.FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	var m []string
	switch f.kind {
	case settingsData:
		if m = dockerKey.FindStringSubmatch(line); m == nil {
			m = dataKey.FindStringSubmatch(line)
		}
	case settingsConfigCode:
		if m = fieldKey.FindStringSubmatch(line); m == nil {
			m = literalAssign.FindStringSubmatch(line)
		}
	case settingsCode:
		if f.shell {
			m = exportKey.FindStringSubmatch(line)
		}
	}
	for _, k := range m[min(1, len(m)):] {
		if k != "" {
			return k
		}
	}
	return ""
}
