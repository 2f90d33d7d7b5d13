package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/canbus"
	"fieldtap/services/dbc"
	"fieldtap/services/j1587"
	"fieldtap/services/j1939"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/services/transmit"
)

// Bundle is a named group of tools an operator loads together.
type Bundle struct {
	Name  string
	Tools []server.ServerTool
}

// BundleNames lists every bundle this build can load.
func BundleNames(d Deps) []string {
	var names []string
	for _, b := range bundles(d) {
		names = append(names, b.Name)
	}
	return names
}

func bundles(d Deps) []Bundle {
	return []Bundle{
		{Name: "server", Tools: serverTools(d)},
		{Name: "can", Tools: append(canTools(d), dbcTools(d)...)},
		{Name: "j1939", Tools: j1939Tools(d)},
		{Name: "sip", Tools: sipTools(d)},
		{Name: "media", Tools: mediaTools(d)},
		{Name: "j1708", Tools: j1708Tools(d)},
		{Name: "transmit", Tools: transmitTools(d)},
	}
}

// Options are the operator's choices for one MCP server.
type Options struct {
	// Bundles to load; DefaultBundles when nil.
	Bundles []string
	// MaxResponseBytes is the response budget; 0 means
	// DefaultMaxResponseBytes, and less than MinMaxResponseBytes is an error.
	MaxResponseBytes int
	// Audit, when set, records every tools/call (audit.go).
	Audit *Audit
}

// DefaultBundles is every bundle except transmit, which an operator must
// name to load.
func DefaultBundles(d Deps) []string {
	var out []string
	for _, n := range BundleNames(d) {
		if n != bundleTransmit {
			out = append(out, n)
		}
	}
	return out
}

// bundleTransmit is the bundle that can put bytes on a bus.
const bundleTransmit = "transmit"

// NewServer builds the MCP server with the chosen bundles. An unknown
// bundle or a tool name registered twice is an error: mcp-go's AddTools
// would silently replace the first. The server bundle also gets
// describe_response_shape over every loaded tool.
func NewServer(d Deps, o Options) (*server.MCPServer, error) {
	if o.Bundles == nil {
		o.Bundles = DefaultBundles(d)
	}
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.MaxResponseBytes < MinMaxResponseBytes {
		return nil, fmt.Errorf("mcp.max_response_bytes %d: want at least %d", o.MaxResponseBytes, MinMaxResponseBytes)
	}
	tools, err := loadBundles(d, o.Bundles)
	if err != nil {
		return nil, err
	}
	for i := range tools {
		in, err := strictInput(tools[i].Tool.RawInputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", tools[i].Tool.Name, err)
		}
		tools[i].Tool.RawInputSchema = in
	}
	loaded := map[string]mcpgo.Tool{}
	if slices.Contains(o.Bundles, "server") {
		tools = append(tools, shapeTool(d, loaded))
	}
	for _, t := range tools {
		loaded[t.Tool.Name] = t.Tool
	}
	// Outermost first: the audit sees the final outcome, the scope check
	// runs before any work, the budget sees the projected answer, and
	// recovery turns a panic into an envelope the others can read.
	s := server.NewMCPServer("fieldtap", d.Info.Version,
		server.WithToolCapabilities(false),
		// Empty but declared: a client may list resources and prompts,
		// set a log level and ask for completions, and gets the
		// specification's empty answers instead of "method not found".
		server.WithResourceCapabilities(false, false),
		server.WithPromptCapabilities(false),
		server.WithLogging(),
		server.WithCompletions(),
		server.WithToolHandlerMiddleware(audited(d, o.Audit)),
		server.WithToolHandlerMiddleware(scoped(d, loaded)),
		server.WithToolHandlerMiddleware(budget(d, o.MaxResponseBytes, inputProperties(tools))),
		server.WithToolHandlerMiddleware(recovery(d)),
		server.WithHooks(auditHooks(o.Audit, d.Log.Error)),
		server.WithInstructions(instructions),
	)
	s.AddTools(tools...)
	return s, nil
}

// loadBundles collects the named bundles' tools, refusing an unknown
// bundle and a tool name two bundles share.
func loadBundles(d Deps, load []string) ([]server.ServerTool, error) {
	all := bundles(d)
	seen := map[string]string{}
	var tools []server.ServerTool
	for _, name := range load {
		var b *Bundle
		for j := range all {
			if all[j].Name == name {
				b = &all[j]
			}
		}
		if b == nil {
			return nil, fmt.Errorf("unknown MCP bundle %q (have %v)", name, BundleNames(d))
		}
		for _, t := range b.Tools {
			if prev, dup := seen[t.Tool.Name]; dup {
				return nil, fmt.Errorf("tool %s registered by bundles %s and %s", t.Tool.Name, prev, name)
			}
			seen[t.Tool.Name] = name
		}
		tools = append(tools, b.Tools...)
	}
	return tools, nil
}

const instructions = "fieldtap is a passive capture box (SPAN, CAN/J1939, J1708). " +
	"Every tool answers with one JSON envelope: ok, data or items+page, source, warnings, errors. " +
	"Start with capture_status to see which ports exist and whether they are counting."

// recovery turns a handler panic or Go error into a fail envelope, so a
// tool failure reaches the agent as isError, never as JSON-RPC -32603.
func recovery(d Deps) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcpgo.CallToolRequest) (res *mcpgo.CallToolResult, err error) {
			d.Log.Debug("tool call", "tool", req.Params.Name)
			defer func() {
				if p := recover(); p != nil {
					d.Log.Error("tool panicked", "tool", req.Params.Name, "panic", p, "stack", string(debug.Stack()))
					res, err = fail(d.Source(), CodeInternal, fmt.Sprintf("tool %s failed internally", req.Params.Name), "report this as a bug; other tools still work"), nil
				}
			}()
			res, err = next(ctx, req)
			if err != nil {
				d.Log.Warn("tool returned an error", "tool", req.Params.Name, "err", err)
				return fail(d.Source(), CodeInternal, err.Error(), "retry; if it persists, report it"), nil
			}
			return res, nil
		}
	}
}

// handler adapts a typed tool function: arguments are decoded strictly (an
// unknown argument is an INVALID_ARGUMENT naming it) before fn runs.
func handler[In any](d Deps, fn func(context.Context, In) *mcpgo.CallToolResult) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		var in In
		raw, err := json.Marshal(req.GetRawArguments())
		if err != nil {
			return fail(d.Source(), CodeInvalidArgument, "arguments are not JSON: "+err.Error(), "send an object"), nil
		}
		if len(raw) > 0 && string(raw) != "null" {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&in); err != nil {
				return fail(d.Source(), CodeInvalidArgument, "arguments: "+err.Error(), "see the tool's inputSchema in tools/list"), nil
			}
		}
		return fn(ctx, in), nil
	}
}

// schemaOf returns the JSON Schema of T; a type the generator cannot
// describe is a programming error caught at start-up by NewServer's caller.
func schemaOf[T any]() json.RawMessage {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("schema for %T: %v", *new(T), err))
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// outputSchema sets the tool's output schema to the envelope around T.
func outputSchema[T any]() mcpgo.ToolOption {
	return mcpgo.WithRawOutputSchema(schemaOf[Envelope[T]]())
}

// Deps is what tools read. It holds stores and functions, never drivers.
type Deps struct {
	Info     ServerInfo
	Ports    PortLister
	Source   func() SourceInfo
	Log      *slog.Logger
	CAN      *canbus.Store // nil when the box has no CAN port
	J1939    *j1939.Store  // nil when the box has no CAN port
	DBC      *dbc.Registry // databases dbc_load keeps; nil: dbc tools refuse
	SIP      *sip.Store    // nil when the box has no Ethernet port
	SIPStats SIPStats      // SPAN decode counters; nil when none
	J1587    *j1587.Store  // nil when the box has no J1708 port
	// Media is the SPAN port's RTP analyser; nil when none.
	Media         *rtp.Analyser
	MediaInterval time.Duration // its per-interval figure length
	// Transmit is the gatekeeper every transmit tool goes through; nil
	// when the box was built without one (the tools then refuse).
	Transmit *transmit.Service

	// SIPExport writes export_capture files; nil when the box has no
	// Ethernet port.
	SIPExport *sip.Exporter
}
