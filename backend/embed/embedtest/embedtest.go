// Package embedtest holds an embedder for tests whose vectors are fixed
// by the test: the model switches of the write and read pipelines are
// tested with two of them, as net/http/httptest serves handlers' tests.
package embedtest

import (
	"context"
	"strings"
)

// Dim is the length of the vectors Table returns.
const Dim = 8

// Table embeds the texts of Vecs (looked up by their trimmed text) as
// listed and any other text as Other. After, when set, runs once an
// Embed call has its vectors and before it returns them: a test switches
// the store's model there, between a caller's embedding and its use of
// the vectors.
type Table struct {
	Name  string
	Vecs  map[string][]float32
	Other []float32
	After func(texts []string)
}

// Model returns the model name the test gave.
func (e *Table) Model() string { return e.Name }

// Dim returns Dim.
func (e *Table) Dim() int { return Dim }

// Embed returns each text's vector of the table, else Other.
func (e *Table) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := e.Vecs[strings.TrimSpace(t)]
		if !ok {
			v = e.Other
		}
		out[i] = v
	}
	if e.After != nil {
		e.After(texts)
	}
	return out, nil
}

// Unit is the unit vector of length Dim along axis i.
func Unit(i int) []float32 {
	v := make([]float32, Dim)
	v[i] = 1
	return v
}
