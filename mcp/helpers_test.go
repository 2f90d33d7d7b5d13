package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"fieldtap/mcp/answerjson"
	"fieldtap/services/canbus"
	"fieldtap/services/coverage"
	"fieldtap/services/dbc"
	"fieldtap/services/isotp"
	"fieldtap/services/j1587"
	"fieldtap/services/j1939"
	"fieldtap/services/marks"
	"fieldtap/services/netdecode"
	"fieldtap/services/ports"
	"fieldtap/services/ring"
	"fieldtap/services/rtp"
	"fieldtap/services/sandbox"
	"fieldtap/services/sip"
	"fieldtap/services/transmit"
	"fieldtap/services/trunk"
)

type fakePorts []ports.Status

func (f fakePorts) Snapshot() []ports.Status { return f }

// testDeps is what every server needs (needBox) and no store: for tests
// that register tools reading none, or add the stores their tools read.
func testDeps() Deps {
	files, err := sandbox.New() // no root: every name is refused
	if err != nil {
		panic(err)
	}
	return withPorts(Deps{
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Source: func() SourceInfo { return SourceInfo{CaptureIdentity: "test", Live: true} },
		Info:   ServerInfo{Version: "test"},
		Files:  files,
	}, fakePorts{{Name: "span0", Kind: "ethernet", Frames: 3}})
}

// withPorts is d over the ports p, its coverage built from them alone
// (the daemon's also reads the stores' counters).
func withPorts(d Deps, p PortLister) Deps {
	d.Ports = p
	d.Coverage = func(q coverage.Query) coverage.Report {
		return coverage.Build(q, coverage.Inputs{Ports: p.Snapshot()})
	}
	return d
}

// fullDeps is testDeps with every store a bundle needs, each real, empty
// and small, as a box without ports has them: for tests that load every
// bundle, or a bundle some of whose stores they do not fill.
func fullDeps(t testing.TB) Deps {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	d := testDeps()
	var err error
	d.CAN, err = canbus.New(ring.Limits{Items: 100, Bytes: 100 * canbus.FrameBytes()})
	must(err)
	d.J1939, err = j1939.New(j1939.Limits{Samples: ring.Limits{Items: 100, Bytes: 100 * j1939.SampleBytes()},
		Sessions: ring.Limits{Items: 10, Bytes: 10 * j1939.SessionBytes()}})
	must(err)
	d.DBC = dbc.NewRegistry(t.TempDir())
	d.UDS, err = isotp.New(isotp.Limits{})
	must(err)
	d.J1587, err = j1587.New(ring.Limits{Items: 100, Bytes: 100 * j1587.MessageBytes()})
	must(err)
	d.SIP, err = sip.New(sip.Limits{})
	must(err)
	d.SIPStats = sip.NewAnalyser(d.SIP, netdecode.Options{}).Stats
	d.SIPExport = sip.NewExporter(t.TempDir(), netdecode.Options{})
	d.Media, d.MediaInterval = rtp.NewAnalyser(rtp.Options{}), rtp.DefaultInterval
	d.Transmit, err = transmit.New(transmit.Options{})
	must(err)
	d.BlackBox.Captures = noCaptures{}
	d.BlackBox.Files = dirCatalog{sb: d.Files}
	d.Trunk = trunk.New(trunk.Options{})
	d.Marks = marks.New(nil, nil)
	return d
}

// noCaptures is a capture directory that holds nothing.
type noCaptures struct{}

func (noCaptures) OpenCapture(_ context.Context, name string) (ports.Status, error) {
	return ports.Status{}, fmt.Errorf("%w: captures/%s: no such file", ErrCaptureRefused, name)
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
