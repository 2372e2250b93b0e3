package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// startProblem says why the desktop app could not start, in the words its
// dialog shows (issue 21 bug 14: the reason went to stderr only, which a
// launch from a menu or the login never shows).
type startProblem struct {
	// Title is the dialog's title and first line.
	Title string
	// Detail says what is going on and what to do, in a sentence or two.
	Detail string
	// Reason is the error itself.
	Reason string
	// OpenURL is the running daemon's UI (its login link), when one
	// answers on this data dir: the dialog offers to open it in a browser.
	OpenURL string
}

// running is what a daemon holding the data dir answers: where it
// listens and its pid; ok false when none answers.
type running struct {
	Listen, Token string
	PID           int
	// window: it is the desktop app, whose window it shows when asked
	// (showRunning).
	window bool
	ok     bool
}

// findRunning asks the daemon the data dir's runtime file names whether
// it is there and holds our token (httpapi.Probe checks its proof).
func findRunning(dataDir string) running {
	rt, err := daemon.ReadRuntime(dataDir)
	if err != nil || rt.Listen == "" {
		return running{}
	}
	tok, err := daemon.ReadToken(dataDir)
	if err != nil {
		return running{}
	}
	h, ok := httpapi.Probe(context.Background(), rt.Listen, tok, 2*time.Second)
	if !ok {
		return running{}
	}
	pid := h.PID
	if pid == 0 {
		pid = rt.PID
	}
	return running{Listen: rt.Listen, Token: tok, PID: pid, window: h.Window, ok: true}
}

// showRunning asks a running desktop app to bring its window forward
// (POST /api/window/show), the way a second launch hands over where the
// platform's single-instance signal cannot reach it; false when r has no
// window or does not answer.
func showRunning(r running) bool {
	if !r.ok || !r.window {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res, err := httpapi.NewClient(r.Listen, r.Token).ShowWindow(ctx)
	return err == nil && res.Shown
}

// explainStart turns the error that stopped the app into a startProblem.
// dataDir is the data dir the app tried to open, listen the address it
// tried to serve on, and r what holds the data dir (findRunning).
func explainStart(err error, dataDir, listen string, r running) startProblem {
	p := startProblem{Title: "memtray could not start", Reason: err.Error(),
		Detail: "The reason is below; the same text went to the terminal, if there is one."}
	switch {
	case errors.Is(err, memory.ErrLocked) && r.ok:
		p.Title = "memtray is already running"
		p.Detail = fmt.Sprintf("Another memtray (pid %d) holds this data dir (%s) and serves its UI at http://%s: "+
			"open it in your browser. If it is `memtray serve` and you want the window and tray instead, "+
			"stop it (Ctrl-C in its terminal, or `kill %d`) and start the app again.", r.PID, dataDir, r.Listen, r.PID)
		p.OpenURL = "http://" + r.Listen + "/login?token=" + url.QueryEscape(r.Token)
	case errors.Is(err, memory.ErrLocked):
		p.Title = "memtray's data dir is in use"
		p.Detail = fmt.Sprintf("Another memtray process holds %s (a command such as an import, or a daemon that does not answer). "+
			"Wait for it to finish, or stop it, then start the app again.", dataDir)
	case errors.Is(err, store.ErrDamaged):
		// Never an empty store in its place: a user who saw one would
		// write into it, and the damaged file's records would look gone.
		p.Title = "memtray's store is damaged"
		p.Detail = fmt.Sprintf("memtray did not start, so that nothing is written over the damaged records in %s. "+
			"In a terminal, run `memtray doctor` to see what can still be read, then `memtray doctor --salvage` to copy every readable memory "+
			"into a new store (the damaged file is kept beside it, renamed), and start the app again.", dataDir)
	case errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use"):
		p.Title = "memtray cannot listen on " + listen
		p.Detail = "Another program uses that address. Stop it, or start the app with another one " +
			"(`memtray app --listen 127.0.0.1:PORT`, or `listen` in the config file); agents connected with `memtray setup` need connecting again then."
	}
	return p
}

// String is the problem as the terminal gets it (without OpenURL: it
// carries the token, and stderr ends up in logs).
func (p startProblem) String() string {
	return p.Title + ": " + p.Detail + "\n  " + p.Reason
}

// page is the dialog's HTML: no script (the links go to the dialog's own
// handler: /open opens OpenURL in the browser, /close quits).
func (p startProblem) page() []byte {
	var b strings.Builder
	e := html.EscapeString
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>` + e(p.Title) + `</title><style>
:root { color-scheme: light dark; font: 14px/1.45 system-ui, sans-serif; }
body { margin: 0; padding: 20px 24px; background: Canvas; color: CanvasText; }
h1 { font-size: 17px; margin: 0 0 10px; }
code, .reason { font-family: ui-monospace, monospace; font-size: 12px; }
.reason { padding: 8px 10px; border-left: 3px solid #c4312b; background: rgba(127,127,127,.12); white-space: pre-wrap; overflow-wrap: anywhere; }
.row { display: flex; gap: 8px; margin-top: 16px; justify-content: flex-end; }
a.btn { padding: 6px 12px; border: 1px solid rgba(127,127,127,.5); border-radius: 6px; text-decoration: none; color: inherit; }
a.primary { background: #3d5bd9; border-color: #3d5bd9; color: #fff; }
</style></head><body>`)
	b.WriteString(`<h1 id="title">` + e(p.Title) + `</h1>`)
	b.WriteString(`<p id="detail">` + codeSpans(e(p.Detail)) + `</p>`)
	b.WriteString(`<div class="reason" id="reason">` + e(p.Reason) + `</div><div class="row">`)
	if p.OpenURL != "" {
		b.WriteString(`<a class="btn primary" href="/open" id="open">Open it in the browser</a>`)
	}
	b.WriteString(`<a class="btn" href="/close" id="close">Close</a></div></body></html>`)
	return []byte(b.String())
}

// codeSpans turns `x` into <code>x</code> in already escaped text.
func codeSpans(s string) string {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 {
		return s // unbalanced: leave it as it is
	}
	var b strings.Builder
	for i, part := range parts {
		if i%2 == 1 {
			b.WriteString("<code>" + part + "</code>")
		} else {
			b.WriteString(part)
		}
	}
	return b.String()
}
