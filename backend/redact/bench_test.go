package redact

import (
	"strconv"
	"strings"
	"testing"
)

// The benchmarks measure throughput (MB/s) on ordinary coding-agent text
// and on adversarial inputs built to stress the keyword pass and the
// rules: long runs of one byte, of base64, of separators, of keywords.
// Linear time shows as adversarial MB/s in the same range as ordinary
// MB/s (and as flat MB/s across sizes, see BenchmarkRedactSizes).

const benchSize = 1 << 20

// ordinaryText is a mix of prose, code, logs, config and diffs, with a
// few secrets, repeated to n bytes.
func ordinaryText(n int) string {
	var parts []string
	for _, c := range positives() {
		parts = append(parts, c.text)
	}
	for _, c := range negatives {
		parts = append(parts, c.text)
	}
	prose := `I looked at the failing test: the handler reads the token from the
Authorization header but the middleware strips it when the request is
retried. The fix is to copy the header before calling next(). I also
updated README.md and bumped the version to 2.3.1 in package.json.
func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		http.Error(w, "missing key", http.StatusBadRequest)
		return
	}
}
2024-06-03T08:41:12.553Z INFO request_id=3da81ddb-4626-4ad1-a91b-c62df3dd2025 status=201
diff --git a/config.yaml b/config.yaml
@@ -1,4 +1,4 @@
-  timeout: 30
+  timeout: 60
`
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(prose)
		if i%4 == 0 {
			b.WriteString(parts[i/4%len(parts)])
			b.WriteByte('\n')
		}
	}
	return b.String()[:n]
}

func adversarial() map[string]string {
	rep := func(s string) string { return strings.Repeat(s, benchSize/len(s)+1)[:benchSize] }
	return map[string]string{
		"a":              rep("a"),
		"base64":         rep("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkrLw"),
		"equals":         rep("="),
		"colons":         rep(":"),
		"key=value":      rep("key="),
		"password:":      rep("password: "),
		"tokens":         rep("tokentoken_"),
		"quotes":         rep(`"password":"`),
		"newlines":       rep("\n"),
		"AKIA":           rep("AKIA"),
		"eyJ":            rep("eyJ."),
		"begin-pem":      rep("-----BEGIN PRIVATE KEY-----\n"),
		"kind-secret":    rep("kind: Secret\ndata:\n"),
		"url-userinfo":   rep("https://u:p@"),
		"cookie":         rep("Cookie: a=b; "),
		"bearer":         rep("Bearer "),
		"-p":             rep(" -p "),
		"long-line-keys": rep("x_token=abcdef1234567890 "),
	}
}

func BenchmarkRedact(b *testing.B) {
	b.Run("ordinary", func(b *testing.B) {
		s := ordinaryText(benchSize)
		b.SetBytes(int64(len(s)))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			Redact(s)
		}
	})
	for name, s := range adversarial() {
		b.Run("adversarial/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Redact(s)
			}
		})
	}
}

// BenchmarkRedactSizes runs ordinary text and the slowest adversarial
// inputs at growing sizes: MB/s should stay flat (linear time).
func BenchmarkRedactSizes(b *testing.B) {
	for _, n := range []int{64 << 10, 1 << 20, 4 << 20} {
		inputs := map[string]string{"ordinary": ordinaryText(n)}
		for _, unit := range []string{"https://u:p@", "password: ", "key="} {
			inputs[unit] = strings.Repeat(unit, n/len(unit)+1)[:n]
		}
		for name, s := range inputs {
			b.Run(name+"/"+sizeName(n), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for i := 0; i < b.N; i++ {
					Redact(s)
				}
			})
		}
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + "MB"
	}
	return strconv.Itoa(n>>10) + "KB"
}
