package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// handler is a tool's typed handler: decoded arguments in, compact text
// and structured output out. An error becomes a tool error (IsError) whose
// text the agent reads.
type handler[In, Out any] func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error)

// addTool registers a tool whose arguments decodeArgs checks. The input
// schema tells the agent the rules (types, enums, bounds); the checks here
// and in the handler enforce them with plain sentences rather than a JSON
// Schema validator's report, so an agent can correct its call.
func addTool[In, Out any](srv *sdk.Server, tool *sdk.Tool, h handler[In, Out]) {
	in, ok := tool.InputSchema.(*jsonschema.Schema)
	if !ok {
		panic("mcp: " + tool.Name + ": input schema must be a *jsonschema.Schema")
	}
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: %s: output schema: %v", tool.Name, err))
	}
	tool.OutputSchema = out
	srv.AddTool(tool, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		args, err := decodeArgs[In](raw, in)
		if err != nil {
			return toolError(fmt.Errorf("%s: bad arguments: %w", tool.Name, err)), nil
		}
		res, outv, err := h(ctx, req, args)
		if ae := (*argError)(nil); errors.As(err, &ae) {
			return toolError(fmt.Errorf("%s: bad arguments: %w", tool.Name, err)), nil
		}
		if err != nil {
			return toolError(err), nil
		}
		data, err := json.Marshal(outv)
		if err != nil {
			return nil, fmt.Errorf("%s: encode result: %w", tool.Name, err)
		}
		if res == nil {
			res = &sdk.CallToolResult{}
		}
		res.StructuredContent = json.RawMessage(data)
		if len(res.Content) == 0 {
			res.Content = []sdk.Content{&sdk.TextContent{Text: string(data)}}
		}
		return res, nil
	})
}

func toolError(err error) *sdk.CallToolResult {
	var res sdk.CallToolResult
	res.SetError(err)
	return &res
}

// decodeArgs decodes a tool's JSON arguments into In: a JSON object (or
// nothing, for a tool without required arguments) holding the schema's
// required properties and no others, each of the right JSON type.
func decodeArgs[In any](raw json.RawMessage, schema *jsonschema.Schema) (In, error) {
	var in In
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return in, errors.New("arguments must be a JSON object")
	}
	known := slices.Sorted(func(yield func(string) bool) {
		for name := range schema.Properties {
			if !yield(name) {
				return
			}
		}
	})
	var problems []string
	for name := range fields {
		if !slices.Contains(known, name) {
			problems = append(problems, fmt.Sprintf("unknown argument %q (%s)", clip(name, 40), argList(known)))
		}
	}
	for _, name := range schema.Required {
		if v, ok := fields[name]; !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			problems = append(problems, name+" is required")
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return in, errors.New(strings.Join(problems, "; "))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, typeProblem(err, schema)
	}
	if _, err := dec.Token(); err != io.EOF {
		return in, errors.New("arguments must be one JSON object")
	}
	return in, nil
}

// typeProblem says which argument has the wrong JSON type.
func typeProblem(err error, schema *jsonschema.Schema) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		field := te.Field
		if i := strings.IndexByte(field, '.'); i >= 0 {
			field = field[:i]
		}
		want := "of another type"
		if p := schema.Properties[field]; p != nil {
			want = describeType(p)
		}
		return fmt.Errorf("%s must be %s, not %s", te.Field, want, article(te.Value))
	}
	if strings.Contains(err.Error(), "unknown field") {
		return fmt.Errorf("unknown argument: %v", err)
	}
	return fmt.Errorf("arguments are not valid JSON: %v", err)
}

func describeType(s *jsonschema.Schema) string {
	typ := s.Type
	if typ == "" {
		for _, t := range s.Types {
			if t != "null" {
				typ = t
			}
		}
	}
	switch typ {
	case "array":
		if s.Items != nil && s.Items.Type != "" {
			return "an array of " + s.Items.Type + "s"
		}
		return "an array"
	case "integer":
		return "an integer"
	case "object":
		return "an object"
	case "":
		return "of another type"
	}
	return "a " + typ
}

// article turns a JSON value kind of encoding/json ("string", "number 1.5")
// into words.
func article(kind string) string {
	switch {
	case kind == "array", kind == "object":
		return "an " + kind
	case strings.HasPrefix(kind, "number"):
		return "a " + kind
	case kind == "":
		return "that"
	}
	return "a " + kind
}

func argList(names []string) string {
	if len(names) == 0 {
		return "this tool takes no arguments"
	}
	return "arguments: " + strings.Join(names, ", ")
}
