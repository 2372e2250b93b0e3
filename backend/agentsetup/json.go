package agentsetup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// setup edits other programs' JSON config files. To change only memtray's
// own entries it keeps each object's key order, and every value it does not
// touch keeps its original bytes: jsonObject and jsonArray hold either
// json.RawMessage (untouched, written back verbatim), a parsed *jsonObject /
// *jsonArray (a container setup changes something inside), or a fresh Go
// value setup wrote.

type jsonObject struct {
	keys []string
	vals map[string]any
}

type jsonArray struct {
	elems []any
}

// jsonFileError names a malformed file and the line and column of the
// problem.
func jsonFileError(path string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := int64(-1)
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return fmt.Errorf("%s: %w (the file was not changed)", path, err)
	}
	line, col := lineCol(data, off)
	return fmt.Errorf("%s:%d:%d: malformed JSON: %w (the file was not changed)", path, line, col, err)
}

func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

// parseJSONFile parses a config file's top-level object; an empty file is
// an empty object.
func parseJSONFile(path string, data []byte) (*jsonObject, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &jsonObject{vals: map[string]any{}}, nil
	}
	var check any
	if err := json.Unmarshal(data, &check); err != nil {
		return nil, jsonFileError(path, data, err)
	}
	if _, ok := check.(map[string]any); !ok {
		return nil, fmt.Errorf("%s:1:1: the file holds JSON but not an object (the file was not changed)", path)
	}
	o, err := parseObject(data)
	if err != nil {
		return nil, jsonFileError(path, data, err)
	}
	return o, nil
}

func parseObject(data []byte) (*jsonObject, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	o := &jsonObject{vals: map[string]any{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the top-level object")
	}
	return o, nil
}

func parseArray(data []byte) (*jsonArray, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, err
	}
	a := &jsonArray{elems: make([]any, len(raws))}
	for i, r := range raws {
		a.elems[i] = r
	}
	return a, nil
}

// get decodes the value under key into a generic value (nil when absent).
func (o *jsonObject) get(key string) any {
	v, ok := o.vals[key]
	if !ok {
		return nil
	}
	return toGeneric(v)
}

func toGeneric(v any) any {
	var b []byte
	switch t := v.(type) {
	case json.RawMessage:
		b = t
	default:
		var err error
		if b, err = renderJSON(v, "  ", 0); err != nil {
			return nil
		}
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

func (o *jsonObject) set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// remove deletes key, keeping the other keys in order; it reports whether
// key was there.
func (o *jsonObject) remove(key string) bool {
	if _, ok := o.vals[key]; !ok {
		return false
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
	return true
}

// object returns the object under key for changing, creating it when
// absent or null; what, for the error, names the key's path.
func (o *jsonObject) object(key, what string) (*jsonObject, error) {
	switch t := o.vals[key].(type) {
	case *jsonObject:
		return t, nil
	case nil:
	case json.RawMessage:
		if string(bytes.TrimSpace(t)) != "null" {
			child, err := parseObject(t)
			if err != nil {
				return nil, fmt.Errorf("%s is not a JSON object", what)
			}
			o.vals[key] = child
			return child, nil
		}
	default:
		return nil, fmt.Errorf("%s is not a JSON object", what)
	}
	child := &jsonObject{vals: map[string]any{}}
	o.set(key, child)
	return child, nil
}

// array returns the array under key for changing, creating it when absent
// or null.
func (o *jsonObject) array(key, what string) (*jsonArray, error) {
	switch t := o.vals[key].(type) {
	case *jsonArray:
		return t, nil
	case nil:
	case json.RawMessage:
		if string(bytes.TrimSpace(t)) != "null" {
			child, err := parseArray(t)
			if err != nil {
				return nil, fmt.Errorf("%s is not a JSON array", what)
			}
			o.vals[key] = child
			return child, nil
		}
	default:
		return nil, fmt.Errorf("%s is not a JSON array", what)
	}
	child := &jsonArray{}
	o.set(key, child)
	return child, nil
}

// objectAt returns element i of a for changing, as an object.
func (a *jsonArray) objectAt(i int, what string) (*jsonObject, error) {
	switch t := a.elems[i].(type) {
	case *jsonObject:
		return t, nil
	case json.RawMessage:
		child, err := parseObject(t)
		if err != nil {
			return nil, fmt.Errorf("%s is not a JSON object", what)
		}
		a.elems[i] = child
		return child, nil
	}
	return nil, fmt.Errorf("%s is not a JSON object", what)
}

// removeAt deletes element i, keeping the others in order.
func (a *jsonArray) removeAt(i int) {
	a.elems = append(a.elems[:i], a.elems[i+1:]...)
}

// renderJSON writes v at nesting depth with indent as one level's indent.
func renderJSON(v any, indent string, depth int) ([]byte, error) {
	pad := func(d int) string { return strings.Repeat(indent, d) }
	var b bytes.Buffer
	switch t := v.(type) {
	case json.RawMessage:
		return t, nil
	case *jsonObject:
		if len(t.keys) == 0 {
			return []byte("{}"), nil
		}
		b.WriteString("{\n")
		for i, k := range t.keys {
			kb, err := marshalNoEscape(k)
			if err != nil {
				return nil, err
			}
			vb, err := renderJSON(t.vals[k], indent, depth+1)
			if err != nil {
				return nil, err
			}
			b.WriteString(pad(depth + 1))
			b.Write(kb)
			b.WriteString(": ")
			b.Write(vb)
			if i < len(t.keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(pad(depth) + "}")
		return b.Bytes(), nil
	case *jsonArray:
		if len(t.elems) == 0 {
			return []byte("[]"), nil
		}
		b.WriteString("[\n")
		for i, e := range t.elems {
			eb, err := renderJSON(e, indent, depth+1)
			if err != nil {
				return nil, err
			}
			b.WriteString(pad(depth + 1))
			b.Write(eb)
			if i < len(t.elems)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(pad(depth) + "]")
		return b.Bytes(), nil
	default:
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent(pad(depth), indent)
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		return bytes.TrimRight(b.Bytes(), "\n"), nil
	}
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// renderJSONFile renders a whole file in the indent the original used,
// ending in a newline.
func renderJSONFile(o *jsonObject, original []byte) ([]byte, error) {
	out, err := renderJSON(o, detectIndent(original), 0)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// detectIndent returns the leading whitespace of the first indented line
// that opens a key ("  " when there is none).
func detectIndent(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if len(trimmed) < len(line) && strings.HasPrefix(trimmed, `"`) {
			return line[:len(line)-len(trimmed)]
		}
	}
	return "  "
}

// sameJSON reports whether a generic value equals want once want goes
// through JSON (so numbers compare as float64).
func sameJSON(have any, want any) bool {
	b, err := json.Marshal(want)
	if err != nil {
		return false
	}
	var w any
	if json.Unmarshal(b, &w) != nil {
		return false
	}
	return reflect.DeepEqual(have, w)
}
