//go:build desktop

package main

import (
	"io"
	"net/http"
	"os"
	"sync"
)

// selftestEnv names a file: when set, the page reports to it (one JSON
// object a line) that it loaded, what /api/health answered, and the frames
// it receives on /api/events, through the same AssetServer path as the UI.
// build/test-desktop.sh's window test reads it. Test-only.
const selftestEnv = "MEMTRAY_SELFTEST_REPORT"

// selftestPath is where the page posts its reports.
const selftestPath = "/__memtray_selftest"

// selftestMiddleware serves selftestPath when report is set, and passes
// everything else on.
func selftestMiddleware(report string) func(http.Handler) http.Handler {
	if report == "" {
		return nil
	}
	var mu sync.Mutex
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != selftestPath {
				next.ServeHTTP(w, r)
				return
			}
			if r.Method != http.MethodPost {
				http.Error(w, "POST only", http.StatusMethodNotAllowed)
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			f, err := os.OpenFile(report, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				_, err = f.Write(append(body, '\n'))
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
	}
}

// selftestJS runs in the page (WindowExecJS, at DOM ready): it reports the
// page, /api/health, then reads /api/events as a stream and reports each
// frame as it arrives (the first 50), which shows the stream is delivered
// incrementally through Wails' AssetServer.
const selftestJS = `(async () => {
  const report = (o) => fetch(` + "'" + selftestPath + "'" + `, {method: 'POST',
    headers: {'Content-Type': 'application/json'}, body: JSON.stringify(o)}).catch(() => {});
  await report({stage: 'loaded', title: document.title, url: location.href,
    body: (document.body ? document.body.innerText : '').slice(0, 300)});
  try {
    const r = await fetch('/api/health');
    await report({stage: 'health', status: r.status, body: (await r.text()).slice(0, 500)});
  } catch (e) { await report({stage: 'health', error: String(e)}); }
  try {
    const r = await fetch('/api/events', {headers: {Accept: 'text/event-stream'}});
    await report({stage: 'sse-open', status: r.status, type: r.headers.get('Content-Type') || ''});
    if (!r.ok || !r.body) return;
    const reader = r.body.getReader(), dec = new TextDecoder();
    let buf = '', n = 0;
    for (;;) {
      const {value, done} = await reader.read();
      if (done) { await report({stage: 'sse-end'}); return; }
      buf += dec.decode(value, {stream: true});
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, i); buf = buf.slice(i + 2);
        if (n++ < 50) await report({stage: 'sse-frame', frame: frame.slice(0, 1000), t: Date.now()});
      }
    }
  } catch (e) { await report({stage: 'sse-error', error: String(e)}); }
})();`
