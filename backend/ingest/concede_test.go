package ingest

import "testing"

func TestStripAck(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"You're right that `retry()` is already called in `fetchRates()`.", "`retry()` is already called in `fetchRates()`."},
		{"You’re right: the loader must read `rates.toml`, not `rates.json`.", "The loader must read `rates.toml`, not `rates.json`."},
		{"Good catch — the nightly job stems from a duplicate cron entry.", "The nightly job stems from a duplicate cron entry."},
		{"I apologize for the confusion, the cache lives in `var/cache`.", "The cache lives in `var/cache`."},
		{"Ah yes, you're right - the seed data goes in `fixtures/`.", "The seed data goes in `fixtures/`."},
		{"You're absolutely right, and we should keep the changelog entries.", "We should keep the changelog entries."},
		{"You're right to question this, the flag is unused.", "The flag is unused."},
		{"You're absolutely right, and I apologize for the confusion.", ""},
		// What is left keeps the case of an identifier or a command.
		{"You're right, npm run build must run before the tests.", "npm run build must run before the tests."},
		// No concession: the text is left as it is.
		{"No migration is needed because the column is nullable.", "No migration is needed because the column is nullable."},
		{"Okay, the port is 8080 in `dev.env`.", "Okay, the port is 8080 in `dev.env`."},
		{".github/workflows/ci.yml runs the linter.", ".github/workflows/ci.yml runs the linter."},
	}
	for _, tc := range tests {
		if got := stripAck(tc.in); got != tc.want {
			t.Errorf("stripAck(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestConcessionClass: what follows a concession is classified on its own;
// a concession alone stays chat.
func TestConcessionClass(t *testing.T) {
	tests := []struct {
		sent, want string
	}{
		{"You're right that the `ledger_rows` table keeps every revision of an entry.", ClassFinding},
		{"You’re right: `QRect` must be imported from `PyQt6.QtCore`, not `QtGui`.", ClassFinding},
		{"Good catch — the import job fails because `batch_size` defaults to 0 in `import.toml`.", ClassFinding},
		{"You're absolutely right - I apologize for this oversight.", ClassChat},
		{"I apologize for the confusion.", ClassChat},
		{"Thank you for catching this error.", ClassChat},
		{"You're right, let me fix that.", ClassNarration},
	}
	for _, tc := range tests {
		if got := sentenceClass(tc.sent, OriginToolLoop); got != tc.want {
			t.Errorf("sentenceClass(%q) = %s, want %s", tc.sent, got, tc.want)
		}
	}
}
