package eval

import (
	"context"
	"testing"
)

func TestRedactDevShared(t *testing.T) {
	path := sharedFile(t, "eval/secrets-dev.jsonl")
	rep, err := RunRedact(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
	// the targets on the dev set (there is a held-out set: do not tune to it)
	if rep.SecretRecall < 0.98 {
		t.Errorf("secret recall %.3f < 0.98", rep.SecretRecall)
	}
	if rep.FalseRedactionRate > 0.05 {
		t.Errorf("false redaction rate %.3f > 0.05", rep.FalseRedactionRate)
	}
}

func TestGitleaksShared(t *testing.T) {
	dir := sharedFile(t, "data/secrets/gitleaks")
	rep, err := RunGitleaks(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
}

func TestCredSweeperShared(t *testing.T) {
	dir := sharedFile(t, "data/secrets/credsweeper")
	rep, err := runCredSweeper(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
}
