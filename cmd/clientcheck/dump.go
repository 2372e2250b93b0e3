package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
)

// serveFakes is -fakes: both fakes until interrupted, then every request
// they received written into dir (one JSON file each), for looking at what
// a client sends by hand.
func serveFakes(dir, readme string) error {
	anth, err := newFake("anthropic", readme)
	if err != nil {
		return err
	}
	defer anth.Close()
	oai, err := newFake("openai", readme)
	if err != nil {
		return err
	}
	defer oai.Close()
	fmt.Printf("anthropic %s\nopenai    %s/v1\n(interrupt to stop and write the requests into %s)\n", anth.url, oai.url, dir)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	<-ch
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("fakes: %w", err)
	}
	for _, f := range []*fake{anth, oai} {
		for i, ex := range f.requests() {
			b, _ := json.MarshalIndent(struct {
				*exchange
				Body   json.RawMessage `json:",omitempty"`
				Frames []json.RawMessage
				Answer string
			}{exchange: ex, Body: rawOrString(ex.Body), Frames: rawFrames(ex.Frames), Answer: string(ex.Answer)}, "", "  ")
			name := filepath.Join(dir, fmt.Sprintf("%s-%02d.json", f.kind, i))
			if err := os.WriteFile(name, b, 0o644); err != nil {
				return fmt.Errorf("fakes: %w", err)
			}
		}
	}
	return nil
}

// rawOrString is b as JSON: itself when it is JSON, else a JSON string.
func rawOrString(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b))
	return s
}

func rawFrames(fr [][]byte) []json.RawMessage {
	var out []json.RawMessage
	for _, f := range fr {
		out = append(out, rawOrString(f))
	}
	return out
}
