package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
)

// jobPoll is how often the CLI asks a running daemon how its job goes.
const jobPoll = 200 * time.Millisecond

// reindexRemote asks the running daemon to re-embed its store with the
// embedder e selects and switch to it, drawing the job's progress on
// stderr. Ctrl-C cancels the job; the store then keeps its model.
func reindexRemote(env *Env, cl *httpapi.Client, e config.Embedder) error {
	req := httpapi.ReembedRequest{Provider: e.Provider, Model: e.OllamaModel}
	if req.Provider == "auto" || req.Provider == "" {
		// As embed.Select's auto: Ollama when it answers and has the model,
		// else the configured OpenAI-compatible server when it embeds.
		info, err := cl.EmbedderInfo(env.Ctx, httpapi.EmbedderQuery{OpenAIModel: e.OpenAIModel, OpenAIURL: e.OpenAIURL,
			OpenAIKeyEnv: e.OpenAIKeyEnv, Dimensions: e.Dimensions})
		if err != nil {
			return err
		}
		req.Provider = "builtin"
		switch {
		case info.Ollama.Reachable && hasModel(info.Ollama.Models, e.OllamaModel):
			req.Provider = "ollama"
		case e.OpenAIModel != "" && info.OpenAI.Dim > 0:
			req.Provider = "openai"
		}
	}
	switch req.Provider {
	case "builtin":
		req.Model = ""
	case "openai":
		req.Model, req.OpenAIURL, req.OpenAIKeyEnv, req.Dimensions = e.OpenAIModel, e.OpenAIURL, e.OpenAIKeyEnv, e.Dimensions
	}
	job, err := cl.Reembed(env.Ctx, req)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "the running daemon re-embeds every memory with %s and keeps serving (job %s; Ctrl-C cancels it)\n", job.Target, job.ID)
	ended := true                 // whether the last bar line ended with a newline
	bar := isTerminal(env.Stderr) // it redraws itself: not into a log or pipe
	final, err := cl.WaitJob(env.Ctx, job.ID, jobPoll, func(j httpapi.Job) {
		if bar && j.Total > 0 && j.Status == "embedding" {
			embed.RenderBar(env.Stderr, "reindex", j.Done, j.Total)
			ended = j.Done >= j.Total
		}
	})
	if !ended {
		fmt.Fprintln(env.Stderr)
	}
	return jobOutcome(env, final, err)
}

// pullRemote asks the running daemon to pull an Ollama model, drawing the
// job's progress on stderr. Ctrl-C cancels the pull.
func pullRemote(env *Env, cl *httpapi.Client, model string) error {
	job, err := cl.PullModel(env.Ctx, httpapi.PullRequest{Model: model})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "the running daemon pulls %s from Ollama (job %s; Ctrl-C cancels it)\n", job.Target, job.ID)
	bar := pullProgress(env.Stderr)
	final, err := cl.WaitJob(env.Ctx, job.ID, jobPoll, func(j httpapi.Job) {
		if j.Status == "" {
			return
		}
		p := embed.PullProgress{Status: j.Status}
		if j.Total > 0 {
			// One bar for every layer together: the job counts their bytes.
			p.Digest, p.Total, p.Completed = "all", j.Total, j.Done
		}
		bar(p)
	})
	if err := jobOutcome(env, final, err); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s is ready; `memtray reindex --embedder ollama --ollama-model %s` switches the store to it\n", final.Target, final.Target)
	return nil
}

// jobOutcome turns a finished job into the command's result: a done job
// prints its result (a pull's caller prints its own), others are errors.
func jobOutcome(env *Env, j httpapi.Job, err error) error {
	if err != nil {
		if env.Ctx.Err() != nil {
			return fmt.Errorf("interrupted: the daemon's %s job was cancelled: %w", j.Kind, err)
		}
		return err
	}
	switch j.State {
	case httpapi.JobDone:
		if j.Kind != httpapi.JobPull {
			fmt.Fprintln(env.Stdout, j.Result)
		}
		return nil
	case httpapi.JobCanceled:
		return fmt.Errorf("the daemon's %s job was cancelled", j.Kind)
	default:
		return errors.New(j.Error)
	}
}

// hasModel reports whether Ollama's list holds name, with or without
// ":latest", ignoring case (empty name: the default model).
func hasModel(models []httpapi.OllamaModel, name string) bool {
	canon := func(s string) string { return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ":latest") }
	if name == "" {
		name = embed.DefaultOllamaModel
	}
	for _, m := range models {
		if canon(m.Name) == canon(name) {
			return true
		}
	}
	return false
}
