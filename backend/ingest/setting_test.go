package ingest

import "testing"

// TestSettingKey: a line sets a key only as its file's kind says: every
// key of a configuration file, a keyword or a literal of a program named
// as configuration, a CLI flag anywhere but documentation and "--"
// comments, a script's export; a program's assignments and fields, and a
// README's example, set nothing.
func TestSettingKey(t *testing.T) {
	tests := []struct {
		file, line, key string // key "" for none
	}{
		// Configuration files: every key of their format.
		{".github/workflows/docs.yml", "        continue-on-error: true", "continue-on-error"},
		{".github/workflows/docs.yml", "      - name: Deploy to GitHub Pages", "name"},
		{"ci.yaml", `    "timeout-minutes": 20`, "timeout-minutes"},
		{"pyproject.toml", "addopts = \"-q\"", "addopts"},
		{"Cargo.toml", "\"opt-level\" = 3", "opt-level"},
		{"tsconfig.json", `    "strict": true,`, "strict"},
		{"package.json", `    "@types/node": "^20.0.0",`, "@types/node"},
		{"schemas/pdl.schema.json", `    "^[a-z_]+$": {"type": "string"}`, ""},
		{"schemas/pdl.schema.json", `"mesh_size":{"type":"array","minItems":2},`, "mesh_size"},
		{"docker-compose.yml", "    image: postgres:16", "image"},
		{"docker-compose.yml", "      - db:/var/lib/postgresql", ""},
		{"setup.cfg", "max-line-length = 100", "max-line-length"},
		{"deploy/.env", "SKIP_CHECKSUM=1", "SKIP_CHECKSUM"},
		{".env.local", "export API_URL=http://localhost:8080", "API_URL"},
		{"app.properties", "server.port=8080", "server.port"},
		{"infra/main.tf", "  instance_type = \"t3.micro\"", "instance_type"},
		{"Makefile", "CFLAGS := -O2 -Wall", "CFLAGS"},
		{"build/rules.mk", "GOFLAGS ?= -trimpath", "GOFLAGS"},
		{"Dockerfile", "ENV NODE_ENV=production", "NODE_ENV"},
		{"docker/Dockerfile.dev", "ARG PYTHON_VERSION", "PYTHON_VERSION"},
		{".npmrc", "legacy-peer-deps=true", "legacy-peer-deps"},
		{"config.ini", "[server]", ""},
		// Programs named or placed as configuration: keywords, literals.
		{"config/dev.exs", "  sampler: {:otel_sampler_always_on, []}", "sampler"},
		{"config/runtime.exs", "sampler_ratio = String.to_float(System.get_env(\"RATE\") || \"0.1\")", ""},
		{"vite.config.ts", "    port: 5173,", "port"},
		{"mysite/settings.py", "DEBUG = True", "DEBUG"},
		{"mysite/settings.py", "ALLOWED_HOSTS = os.environ.get(\"HOSTS\", \"\").split(\",\")", ""},
		{"app/config.py", "TIMEOUT = 30  # seconds", "TIMEOUT"},
		// Programs: assignments and fields are code.
		{"opk/ui/main_window.py", "prd = load_json(pr) if pr else {}", ""},
		{"opk/plugins/slicers/cura.py", "process_speed = 60.0", ""},
		{"src/server-context.tsx", "      cache: 'no-store',", ""},
		{"src/db/hybrid.rs", "            created_at: row.get(5)?,", ""},
		{"lib/web/session_live.ex", "      show_debug: false,", ""},
		{"main.go", "\tretries := 3", ""},
		{"scripts/notify.sh", "SCRIPT_DIR=\"$(cd \"$(dirname \"$0\")\" && pwd)\"", ""},
		{"scripts/notify.sh", "export OTEL_SDK_DISABLED=true", "OTEL_SDK_DISABLED"},
		// CLI flags, wherever a command is written.
		{"scripts/build.sh", "  --no-cache \\", "--no-cache"},
		{"tools/browser.py", `        "--headless=new",`, "--headless"},
		{".github/workflows/ci.yml", "            --maxfail=1", "--maxfail"},
		{"db/migrate.sql", "--drop-legacy table first", ""},
		// Documentation sets nothing, not even an example.
		{"docs/PDL_SPEC.md", "print_speed_max: 120", ""},
		{"README.md", "  --no-cache", ""},
	}
	for _, tc := range tests {
		if got := settingKey(tc.file, tc.line); got != tc.key {
			t.Errorf("settingKey(%q, %q) = %q, want %q", tc.file, tc.line, got, tc.key)
		}
	}
}
