package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// unmarshalerType is the type of json.Unmarshaler: such a value (Duration)
// is read whole, as a leaf.
var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// fieldProblems walks a JSON value against the Go type t it decodes into
// and returns every field that cannot be decoded (an unknown field, a
// value of the wrong type), each with its path (search.k, steward.types
// .project.prune_below), in the order of the data, and the value without
// them, which decodes into t.
func fieldProblems(path string, raw json.RawMessage, t reflect.Type) (json.RawMessage, Errors) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	trimmed := bytes.TrimSpace(raw)
	if bytes.Equal(trimmed, []byte("null")) {
		return raw, nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return leafProblem(path, raw, t)
	}
	switch t.Kind() {
	case reflect.Struct:
		if len(trimmed) == 0 || trimmed[0] != '{' {
			return leafProblem(path, raw, t)
		}
		fields := jsonFields(t)
		return objectProblems(path, raw, func(key string) (reflect.Type, bool) {
			if f, ok := fields[key]; ok {
				return f, true
			}
			for name, f := range fields {
				if strings.EqualFold(name, key) { // as encoding/json matches
					return f, true
				}
			}
			return nil, false
		})
	case reflect.Map:
		if len(trimmed) == 0 || trimmed[0] != '{' || t.Key().Kind() != reflect.String {
			return leafProblem(path, raw, t)
		}
		return objectProblems(path, raw, func(string) (reflect.Type, bool) { return t.Elem(), true })
	}
	return leafProblem(path, raw, t)
}

// leafProblem decodes raw into a new t: the value, or its problem.
func leafProblem(path string, raw json.RawMessage, t reflect.Type) (json.RawMessage, Errors) {
	err := json.Unmarshal(raw, reflect.New(t).Interface())
	if err == nil {
		return raw, nil
	}
	return nil, Errors{{Field: orWhole(path), Problem: typeProblem(err, t)}}
}

// typeProblem says what a value that did not decode into t should be.
func typeProblem(err error, t reflect.Type) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	want := "a value of type " + t.String()
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "a whole number"
	case reflect.Float32, reflect.Float64:
		want = "a number"
	case reflect.Bool:
		want = "true or false"
	case reflect.String:
		want = "a string"
	case reflect.Slice, reflect.Array:
		want = "a list"
	case reflect.Struct, reflect.Map:
		want = "an object"
	}
	if te.Value == "number" || strings.HasPrefix(te.Value, "number ") {
		return fmt.Sprintf("must be %s, not the number %s", want, strings.TrimPrefix(te.Value, "number "))
	}
	return fmt.Sprintf("must be %s, not %s", want, article(te.Value))
}

// article puts "a" or "an" before a JSON kind (string, array, object, bool).
func article(kind string) string {
	switch kind {
	case "array", "object":
		return "an " + kind
	case "bool":
		return "true or false"
	}
	return "a " + kind
}

// objectProblems walks a JSON object's members, typed by field (false: an
// unknown field).
func objectProblems(path string, raw json.RawMessage, field func(key string) (reflect.Type, bool)) (json.RawMessage, Errors) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // {
		return nil, Errors{{Field: orWhole(path), Problem: err.Error()}}
	}
	var errs Errors
	var out bytes.Buffer
	out.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, append(errs, FieldError{Field: orWhole(path), Problem: err.Error()})
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, append(errs, FieldError{Field: orWhole(path), Problem: err.Error()})
		}
		sub := key
		if path != "" {
			sub = path + "." + key
		}
		t, ok := field(key)
		if !ok {
			errs = append(errs, FieldError{Field: sub, Problem: "unknown field"})
			continue
		}
		good, fe := fieldProblems(sub, v, t)
		errs = append(errs, fe...)
		if good == nil {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		out.WriteString(strconv.Quote(key))
		out.WriteByte(':')
		out.Write(good)
	}
	out.WriteByte('}')
	return out.Bytes(), errs
}

// orWhole names the whole file for an empty path.
func orWhole(path string) string {
	if path == "" {
		return "(file)"
	}
	return path
}

// jsonFields maps the JSON names of t's exported fields (those of embedded
// structs included) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" && !strings.HasPrefix(tag, "-,") {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
