// API answers of the setup routes, for the agents store and AgentSetup tests.
import type { SetupClient, SetupList, SetupOptions, SetupPreview } from '../lib/api/models';

export const claude: SetupClient = {
  name: 'claude-code', label: 'Claude Code', hooks: true, proxy: true, detected: true, configured: false,
  files: [{ path: '/home/me/.claude.json', exists: false }, { path: '/home/me/.claude/settings.json', exists: true }],
};

export const cursor: SetupClient = {
  name: 'cursor', label: 'Cursor', hooks: false, proxy: false, detected: false, configured: false,
  files: [{ path: '/home/me/.cursor/mcp.json', exists: false }],
};

export const list: SetupList = { clients: [claude, cursor], binary: '/usr/bin/memtray', proxy: 'http://127.0.0.1:7432', home: '/home/me', cli_flags: [] };

/** A connect preview; version changes the settings file's hash. */
export function connectPreview(options: SetupOptions = {}, version = 1): SetupPreview {
  return {
    client: 'claude-code', undo: false, options, changes: 2,
    notes: ["Claude Code's API traffic goes through memtray's proxy at http://127.0.0.1:7432"],
    files: [
      {
        path: '/home/me/.claude.json', existed: false, changed: true, state: 'to change',
        what: ['add MCP server "memtray": /usr/bin/memtray mcp (stdio)'],
        diff: '--- /dev/null\n+++ /home/me/.claude.json\n@@ -0,0 +1,3 @@\n+{\n+  "mcpServers": {}\n+}\n',
        sha256: '', after_sha256: 'a'.repeat(64),
      },
      {
        path: '/home/me/.claude/settings.json', existed: true, changed: true, state: 'to change',
        what: ['set env ANTHROPIC_BASE_URL=http://127.0.0.1:7432 (memtray\'s proxy)'],
        diff: '--- /home/me/.claude/settings.json\n+++ /home/me/.claude/settings.json\n@@ -1,3 +1,4 @@\n {\n-  "model": "opus"\n+  "model": "opus",\n+  "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:7432"}\n }\n',
        sha256: 'b'.repeat(63) + String(version), after_sha256: 'c'.repeat(64),
      },
    ],
  };
}

export const undoPreview: SetupPreview = {
  client: 'claude-code', undo: true, options: {}, changes: 1, notes: [],
  files: [
    {
      path: '/home/me/.claude.json', existed: true, changed: true, remove: true, state: 'unchanged since setup, which created it: remove',
      what: [], diff: '--- /home/me/.claude.json\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-{\n-  "mcpServers": {}\n-}\n',
      sha256: 'a'.repeat(64), after_sha256: '',
    },
    {
      path: '/home/me/.claude/settings.json', existed: true, changed: false, state: 'changed since setup: memtray\'s entries are already gone, nothing to change',
      what: [], diff: '', sha256: 'd'.repeat(64), after_sha256: '',
    },
  ],
};
