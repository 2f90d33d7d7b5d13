package mcp

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"fieldtap/mcp/answerjson"
	"fieldtap/services/ports"
)

type fakePorts []ports.Status

func (f fakePorts) Snapshot() []ports.Status { return f }

func testDeps() Deps {
	return Deps{
		Ports:  fakePorts{{Name: "span0", Kind: "ethernet", Frames: 3}},
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Source: func() SourceInfo { return SourceInfo{CaptureIdentity: "test", Live: true} },
		Info:   ServerInfo{Version: "test"},
	}
}

// testServer registers defs alone, with the default budget.
func testServer(t *testing.T, d Deps, defs ...toolDef) *server.MCPServer {
	t.Helper()
	return build(d, Options{MaxResponseBytes: DefaultMaxResponseBytes, OutputSchemas: true}, defs, false)
}

// rpc sends one JSON-RPC request through the server in-process and
// returns the raw result.
func rpc(t *testing.T, s *server.MCPServer, method string, params any) json.RawMessage {
	t.Helper()
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	msg := s.HandleMessage(context.Background(), req)
	out, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	// Every answer the tests see is also written by stdio's
	// answerjson.Append, which must say the same.
	if fast, ok := answerjson.Append(nil, msg); ok {
		var a, b any
		if err := json.Unmarshal(fast, &a); err != nil {
			t.Fatalf("answerjson.Append wrote invalid JSON: %v", err)
		}
		json.Unmarshal(out, &b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("answerjson.Append and encoding/json disagree:\n%.400s\n%.400s", fast, out)
		}
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("%s: JSON-RPC error %d %s", method, resp.Error.Code, resp.Error.Message)
	}
	return resp.Result
}

// callResult is a tools/call result as the wire carries it.
type callResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// call makes one tools/call and checks what every answer owes: content[0]
// is the envelope, structuredContent (sent with output schemas on) the
// same bytes, isError iff !ok.
func callTool(t *testing.T, s *server.MCPServer, tool string, args map[string]any) (callResult, map[string]any) {
	t.Helper()
	var r callResult
	if err := json.Unmarshal(rpc(t, s, "tools/call", map[string]any{"name": tool, "arguments": args}), &r); err != nil {
		t.Fatal(err)
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(r.Content[0].Text), &env); err != nil {
		t.Fatalf("content[0] is not the envelope: %v", err)
	}
	if env["ok"] == r.IsError {
		t.Errorf("%s: ok=%v but isError=%v", tool, env["ok"], r.IsError)
	}
	if len(r.StructuredContent) > 0 && string(r.StructuredContent) != r.Content[0].Text {
		t.Errorf("%s: structuredContent differs from content[0]", tool)
	}
	return r, env
}

// firstError is the code and message of a failed answer.
func firstError(t *testing.T, env map[string]any) (code, msg, hint string) {
	t.Helper()
	errs, _ := env["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("no error in %v", env)
	}
	e := errs[0].(map[string]any)
	return e["code"].(string), e["message"].(string), e["hint"].(string)
}

// outputValidator compiles output schemas with an independent JSON Schema
// implementation (santhosh-tekuri/jsonschema), not the generator that
// wrote them, so a schema and an answer that agree only by construction
// still get checked against the specification.
type outputValidator struct {
	c       *jsonschema.Compiler
	schemas map[string]*jsonschema.Schema
}

func newOutputValidator() *outputValidator {
	return &outputValidator{c: jsonschema.NewCompiler(), schemas: map[string]*jsonschema.Schema{}}
}

// validate checks body against tool's advertised output schema.
func (v *outputValidator) validate(t *testing.T, tool string, schema json.RawMessage, body []byte) {
	t.Helper()
	sch, ok := v.schemas[tool]
	if !ok {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(schema)))
		if err != nil {
			t.Fatalf("%s: output schema is not JSON: %v", tool, err)
		}
		url := "mem://" + tool + ".json"
		if err := v.c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		if sch, err = v.c.Compile(url); err != nil {
			t.Fatalf("%s: output schema does not compile: %v", tool, err)
		}
		v.schemas[tool] = sch
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("%s: answer is not JSON: %v", tool, err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s: answer does not match its output schema: %v\nanswer: %.600s", tool, err, body)
	}
}

// listTools is tools/list's tools with their schemas.
func listTools(t *testing.T, s *server.MCPServer) []listedTool {
	t.Helper()
	var list struct {
		Tools []listedTool `json:"tools"`
	}
	if err := json.Unmarshal(rpc(t, s, "tools/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	return list.Tools
}

type listedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Output      json.RawMessage `json:"outputSchema"`
	Annotations map[string]any  `json:"annotations"`
}
