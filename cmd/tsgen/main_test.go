package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestTypesInSync fails when the committed types.ts differs from what the
// generator writes now.
func TestTypesInSync(t *testing.T) {
	path := filepath.Join("..", "..", "frontend", "src", "lib", "api", "types.ts")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: generate it with `%s`", err, Command)
	}
	if !bytes.Equal(got, Generate()) {
		t.Fatalf("%s is out of date with the Go API types: regenerate it with `%s` (from the repository root) and commit it", path, Command)
	}
}

func TestTypeMapping(t *testing.T) {
	type inner struct {
		A string `json:"a"`
		B int    `json:"b"`
	}
	type sample struct {
		inner
		B       string           `json:"b,omitempty"` // shadows inner's b
		When    time.Time        `json:"when"`
		Maybe   time.Time        `json:"maybe,omitzero"`
		Skip    string           `json:"-"`
		Bytes   []byte           `json:"bytes"`
		Tags    map[string][]int `json:"tags"`
		Any     any              `json:"any"`
		Ptr     *inner           `json:"ptr"`
		Opt     *float64         `json:"opt,omitempty"`
		private string
		NoTag   bool
	}
	g := &gen{decls: map[string]string{}, seen: map[reflect.Type]string{}}
	got := g.fields(reflect.TypeOf(sample{}), "")
	for _, want := range []string{
		"b?: string;", "when: string;", "maybe?: string;", "bytes: string;", "tags: Record<string, number[]>;",
		"any: unknown;", "ptr: inner | null;", "opt?: number;", "NoTag: boolean;", "a: string;",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	for _, bad := range []string{"Skip", "private", "b: number"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q should not be in\n%s", bad, got)
		}
	}
}
