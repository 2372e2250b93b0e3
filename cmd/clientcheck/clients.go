package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// client is one agent under test: its npm package, pinned version, where
// its native binary lands in the npm install, and how to run one prompt
// headless through a world.
type client struct {
	Name    string // memtray setup's name: claude-code, codex
	Pkg     string // npm package
	Version string // pinned version
	// Bin is the native binary's path below the install's node_modules.
	Bin string
	// Hooks are the hook events memtray's setup installs for this client
	// and the client fires in a headless run.
	Hooks []string
	path  string // the installed binary
}

// The pinned clients (issue 24). Their npm packages carry the native
// binaries as optional dependencies: @anthropic-ai/claude-code-linux-x64,
// and for Codex an npm alias of @openai/codex@<version>-linux-x64.
var clients = []*client{
	{Name: "claude-code", Pkg: "@anthropic-ai/claude-code", Version: "2.1.332",
		Bin:   "@anthropic-ai/claude-code/bin/claude.exe",
		Hooks: []string{"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}},
	{Name: "codex", Pkg: "@openai/codex", Version: "0.171.0",
		Bin:   "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
		Hooks: []string{"SessionStart", "UserPromptSubmit", "Stop"}},
}

// install puts the pinned client into cache/<pkg>@<version> with npm
// (once; later runs reuse it) and sets c.path.
func (c *client) install(ctx context.Context, cache string) error {
	dir := filepath.Join(cache, strings.ReplaceAll(c.Pkg, "/", "+")+"@"+c.Version)
	c.path = filepath.Join(dir, "node_modules", filepath.FromSlash(c.Bin))
	if _, err := os.Stat(c.path); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("install %s: %w", c.Pkg, err)
	}
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", dir, c.Pkg+"@"+c.Version)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install %s@%s: %w: %s", c.Pkg, c.Version, err, out)
	}
	if _, err := os.Stat(c.path); err != nil {
		return fmt.Errorf("npm install %s@%s: no native binary at %s (not linux-x64?)", c.Pkg, c.Version, c.path)
	}
	return nil
}

// runOpts says how a client runs one prompt.
type runOpts struct {
	prompt string
	// direct sends the client straight to the fake (not through memtray).
	direct bool
	// http makes Codex use HTTPS POSTs only (no WebSocket).
	http bool
	// resume continues the client's last session in the project.
	resume bool
}

// run runs one prompt headless in the world's project and returns its
// output and how long it took.
func (c *client) run(ctx context.Context, w *world, o runOpts) ([]byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	switch c.Name {
	case "claude-code":
		// -p is print mode (headless); stream-json needs --verbose; Read
		// is allowed so the README prompt makes a tool loop.
		args := []string{"-p", o.prompt, "--output-format", "stream-json", "--verbose", "--allowedTools", "Read"}
		if o.resume {
			args = append(args, "--continue")
		}
		cmd = exec.CommandContext(ctx, c.path, args...)
		cmd.Env = w.env()
		if o.direct {
			// The process env wins over settings.json's env: straight to the fake.
			cmd.Env = append(cmd.Env, "ANTHROPIC_BASE_URL="+w.anth.url)
		}
	case "codex":
		args := []string{"exec", "--skip-git-repo-check", "--color", "never"}
		if o.resume {
			args = []string{"exec", "resume", "--last", "--skip-git-repo-check"}
		}
		if o.direct {
			args = append(args, "-c", fmt.Sprintf("model_providers.fake.base_url=%q", w.oai.url+"/v1"))
		}
		if o.http {
			args = append(args, "-c", "model_providers.fake.supports_websockets=false")
		}
		cmd = exec.CommandContext(ctx, c.path, append(args, o.prompt)...)
		cmd.Env = w.env()
	default:
		return nil, 0, fmt.Errorf("unknown client %q", c.Name)
	}
	cmd.Dir = w.project
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return out, took, fmt.Errorf("%s timed out after 3 min", c.Name)
	}
	if err != nil {
		return out, took, fmt.Errorf("%s: %w: %s", c.Name, err, tail(out, 400))
	}
	return out, took, nil
}

// prepare writes what the client needs in the world before memtray's
// setup: for Codex a config.toml with the fake provider, whose base_url is
// memtray's proxy (the tap in front of it); `run` points it straight at the
// fake for a direct run. Claude Code needs nothing: setup writes
// ANTHROPIC_BASE_URL into ~/.claude/settings.json.
func (c *client) prepare(w *world) error {
	if c.Name != "codex" {
		return nil
	}
	dir := filepath.Join(w.home, ".codex")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("codex config: %w", err)
	}
	toml := fmt.Sprintf(`model = "gpt-5-codex"
model_provider = "fake"

[model_providers.fake]
name = "clientcheck fake"
base_url = %q
env_key = "OPENAI_API_KEY"
wire_api = "responses"
supports_websockets = true
`, w.tap.url+"/openai/v1")
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(toml), 0o600); err != nil {
		return fmt.Errorf("codex config: %w", err)
	}
	return nil
}

func tail(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
