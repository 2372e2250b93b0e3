package embed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/memtray/memtray/backend/memory"
)

// ErrDimensions says a server's vectors do not have the length asked for
// (embedder.dimensions): the model ignores or does not support shortening.
var ErrDimensions = errors.New("unexpected vector dimension")

// openAIResponse is an OpenAI embeddings answer:
// {"object":"list","data":[{"object":"embedding","embedding":[...],"index":0}],"model":"...","usage":{...}}.
// Some servers answer 200 with {"error":{...}} instead.
type openAIResponse struct {
	Data []struct {
		Embedding []float64 `json:"embedding"`
		Index     *int      `json:"index"`
	} `json:"data"`
	Model string          `json:"model"`
	Error json.RawMessage `json:"error"`
}

// ParseEmbeddings checks an OpenAI embeddings answer for want texts and
// returns their L2-normalised vectors ordered by index: a JSON object whose
// data holds exactly want items, indexes 0..want-1 each once (or none at
// all: then in the order given), one dimension (dim when it is positive),
// finite values and no zero vector.
func ParseEmbeddings(body []byte, want, dim int) ([][]float32, error) {
	var r openAIResponse
	if err := json.Unmarshal(body, &r); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return nil, fmt.Errorf("malformed answer: %s has the wrong type (%v)", typ.Field, err)
		}
		return nil, fmt.Errorf("answer is not JSON (%v): %s", err, snippet(body))
	}
	if len(r.Data) == 0 {
		if msg := errorField(r.Error); msg != "" {
			return nil, fmt.Errorf("server said: %s", msg)
		}
		return nil, fmt.Errorf("answer has no data (no vectors for %d texts): %s", want, snippet(body))
	}
	if len(r.Data) != want {
		return nil, fmt.Errorf("got %d vectors for %d texts", len(r.Data), want)
	}
	withIndex := 0
	for _, d := range r.Data {
		if d.Index != nil {
			withIndex++
		}
	}
	if withIndex != 0 && withIndex != len(r.Data) {
		return nil, fmt.Errorf("%d of %d vectors have no index", len(r.Data)-withIndex, len(r.Data))
	}
	embs := make([][]float32, want)
	for pos, d := range r.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
			if i < 0 || i >= want {
				return nil, fmt.Errorf("vector index %d is outside 0..%d", i, want-1)
			}
			if embs[i] != nil {
				return nil, fmt.Errorf("vector index %d appears twice", i)
			}
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("vector %d is empty", i)
		}
		if dim > 0 && len(d.Embedding) != dim {
			return nil, fmt.Errorf("%w: vector %d has %d dimensions, embedder.dimensions asks for %d (does the model support shortening?): %w",
				ErrDimensions, i, len(d.Embedding), dim, memory.ErrModelMismatch)
		}
		v := make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			v[j] = float32(x) // beyond float32's range becomes ±Inf, refused below
		}
		embs[i] = v
	}
	return checkVectors(embs, want)
}

// ErrorMessage extracts the server's message from an error answer:
// OpenAI's {"error":{"message":...}}, {"error":"..."}, vLLM's
// {"message":...}, FastAPI's {"detail":...}, else the text itself on one
// line, else the status's name. It is at most 300 characters.
func ErrorMessage(body []byte, status int) string {
	var r struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &r) == nil {
		msg = errorField(r.Error)
		if msg == "" {
			msg = r.Message
		}
		if msg == "" && len(r.Detail) > 0 {
			var s string
			if json.Unmarshal(r.Detail, &s) == nil {
				msg = s
			} else {
				msg = string(r.Detail)
			}
		}
	}
	if strings.TrimSpace(msg) == "" {
		msg = string(bytes.TrimSpace(body))
		if strings.HasPrefix(msg, "<") { // an HTML error page says nothing useful
			msg = ""
		}
	}
	msg = oneLine(msg, 300)
	if msg == "" {
		msg = http.StatusText(status)
	}
	if msg == "" {
		msg = fmt.Sprintf("status %d", status)
	}
	return msg
}

// errorField reads an "error" member: an object with a message, or a string.
func errorField(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// snippet shows the start of a body in an error, on one line.
func snippet(body []byte) string {
	if len(body) == 0 {
		return "(empty body)"
	}
	return fmt.Sprintf("%q", oneLine(string(body), 80))
}

// oneLine turns control characters into spaces, squeezes spaces, drops
// invalid UTF-8 and cuts s to n runes.
func oneLine(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	count, space := 0, false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if count >= n {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			count++
			space = false
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}
