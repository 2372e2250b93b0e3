// Package embed holds memtray's embedders, all implementing memory.Embedder:
//
//   - Builtin: offline, deterministic feature hashing; no network, no model file.
//   - Ollama: a local Ollama server's embedding model (nomic-embed-text by
//     default) through github.com/ollama/ollama/api, with timeouts, retries on
//     transient failures, model pull with progress, and clear errors.
//   - OpenAI: any server speaking the OpenAI embeddings protocol (POST
//     {url}/embeddings): llama.cpp's llama-server, LM Studio, vLLM, LocalAI
//     or a hosted API, with the same batching, timeouts, retries (honouring
//     Retry-After) and validated answers.
//   - Cached: a content-hash LRU cache with batching and in-call dedupe in
//     front of any embedder.
//
// Select picks an embedder from the configuration ("auto", "ollama",
// "openai", "builtin") and says why; ForModel rebuilds the embedder a store was written
// with, so a running store never mixes models. RenderBar and ProgressBar draw
// simple terminal progress bars for pulls, reindexing and imports.
package embed

import (
	"fmt"
	"io"
	"strings"
)

// barWidth is the number of cells of a progress bar.
const barWidth = 30

// RenderBar draws one progress line on w, starting with a carriage return so
// the next call overwrites it: "label [=====>    ]  42% 420/1000". A total
// of 0 or less draws the count without a bar. When done reaches total it
// ends the line with a newline, so call it once with done == total. Write
// errors are ignored: progress is cosmetic.
func RenderBar(w io.Writer, label string, done, total int64) {
	renderBar(w, label, done, total, func(n int64) string { return fmt.Sprint(n) })
}

// renderBar is RenderBar with a formatter for the counts.
func renderBar(w io.Writer, label string, done, total int64, format func(int64) string) {
	if w == nil {
		return
	}
	if done < 0 {
		done = 0
	}
	if total <= 0 {
		fmt.Fprintf(w, "\r%s %s", label, format(done))
		return
	}
	if done > total {
		done = total
	}
	filled := int(done * barWidth / total)
	var b strings.Builder
	b.WriteString(strings.Repeat("=", filled))
	if filled < barWidth {
		b.WriteString(">")
		b.WriteString(strings.Repeat(" ", barWidth-filled-1))
	}
	end := ""
	if done == total {
		end = "\n"
	}
	// Pad the counts so a shorter line fully covers a longer one.
	counts := fmt.Sprintf("%-*s", len(format(total))*2+1, format(done)+"/"+format(total))
	if end != "" {
		counts = strings.TrimRight(counts, " ")
	}
	fmt.Fprintf(w, "\r%s [%s] %3d%% %s%s", label, b.String(), done*100/total, counts, end)
}

// ProgressBar returns a progress callback for Ollama.Pull that draws one bar
// per layer on w (a terminal) and a line per other status.
func ProgressBar(w io.Writer) func(PullProgress) {
	var lastDigest, lastStatus string
	var finished bool // the current layer's bar ended with a newline
	return func(p PullProgress) {
		if p.Total > 0 && p.Digest != "" {
			if p.Digest != lastDigest {
				if lastDigest != "" && !finished {
					fmt.Fprintln(w)
				}
				lastDigest, finished = p.Digest, false
			}
			if finished {
				return
			}
			renderBar(w, p.Status, p.Completed, p.Total, formatBytes)
			finished = p.Completed >= p.Total
			lastStatus = p.Status
			return
		}
		if p.Status == lastStatus {
			return
		}
		if lastDigest != "" && !finished {
			fmt.Fprintln(w)
			finished = true
		}
		lastStatus = p.Status
		fmt.Fprintln(w, p.Status)
	}
}

// formatBytes writes a byte count in decimal units, e.g. "274.3 MB", as Ollama does.
func formatBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
