package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp/answerjson"
	"fieldtap/mcp/audit"
	"fieldtap/services/canbus"
	"fieldtap/services/coverage"
	"fieldtap/services/dbc"
	"fieldtap/services/isotp"
	"fieldtap/services/j1587"
	"fieldtap/services/j1939"
	"fieldtap/services/marks"
	"fieldtap/services/ports"
	"fieldtap/services/rtp"
	"fieldtap/services/rules"
	"fieldtap/services/sandbox"
	"fieldtap/services/sip"
	"fieldtap/services/sipsecurity"
	"fieldtap/services/transmit"
	"fieldtap/services/trunk"
)

// bundle is a named list of tools an operator loads together.
type bundle struct {
	name  string
	tools []toolDef
	// needs are the stores its tools read; NewServer refuses a Deps
	// without them.
	needs need
	// vehicle marks the vehicle depth (UDS, DBC, J1939 diagnostics, CAN
	// reverse engineering, the J1587 reference): loaded by default only
	// on a box with a CAN or J1708 port, where a technician's agent needs
	// them; a VoIP box's tools/list stays without them.
	vehicle bool
}

// bundleTransmit is the bundle that can put bytes on a bus.
const bundleTransmit = "transmit"

// allBundles is every bundle this build compiles, in tools/list order.
func allBundles() []bundle {
	return []bundle{
		{name: "server", tools: serverTools},
		{name: "can", tools: canTools, needs: needCAN | needDBC},
		{name: "j1939", tools: j1939Tools, needs: needJ1939},
		{name: "sip", tools: sipTools, needs: needSIP | needSIPStats | needSIPExport | needMedia},
		{name: "media", tools: mediaTools, needs: needMedia},
		{name: "j1708", tools: j1708Tools, needs: needJ1587},
		{name: bundleTransmit, tools: transmitTools, needs: needTransmit | needCAN},
		{name: "blackbox", tools: blackboxTools, needs: needCaptures | needFileCatalog},
		{name: "uds", tools: udsTools, needs: needCAN | needUDS, vehicle: true},
		{name: "dbc", tools: dbcTools, needs: needCAN | needDBC, vehicle: true},
		{name: "j1939_diag", tools: j1939DiagTools, needs: needCAN | needJ1939, vehicle: true},
		{name: "canre", tools: canreTools, needs: needCAN | needJ1939 | needMarks, vehicle: true},
		{name: "j1587_ref", tools: j1587RefTools, vehicle: true},
		{name: "sip_forensics", tools: sipForensicsTools, needs: needSIP | needSIPExport | needMedia},
		{name: "sip_site", tools: sipSiteTools, needs: needSIP | needSIPExport | needMedia | needTrunk},
		{name: "bus_await", tools: busAwaitTools, needs: needCAN | needJ1939 | needJ1587},
		{name: "rules", tools: rulesTools},
		{name: "timeline", tools: timelineTools, needs: needTimeline},
	}
}

// BundleNames lists every bundle this build can load.
func BundleNames() []string {
	var names []string
	for _, b := range allBundles() {
		names = append(names, b.name)
	}
	return names
}

// AllBundles is the name that loads every bundle this build compiles,
// transmit included (whose sends keep every gate of
// docs/transmit-safety.md).
const AllBundles = "all"

// DefaultBundles is every bundle except transmit; the vehicle depth
// bundles only when vehicle, a box with a CAN or J1708 port.
func DefaultBundles(vehicle bool) []string {
	var names []string
	for _, b := range allBundles() {
		if b.name != bundleTransmit && (vehicle || !b.vehicle) {
			names = append(names, b.name)
		}
	}
	return names
}

// ResolveBundles is what names loads: DefaultBundles(vehicle) when names
// is nil, every bundle when it is AllBundles alone, else names (an empty
// list loads none).
func ResolveBundles(names []string, vehicle bool) []string {
	switch {
	case names == nil:
		return DefaultBundles(vehicle)
	case len(names) == 1 && names[0] == AllBundles:
		return BundleNames()
	}
	return names
}

// hasVehiclePort reports whether d lists a CAN or J1708 port.
func hasVehiclePort(d Deps) bool {
	return slices.ContainsFunc(d.Ports.Snapshot(), func(p ports.Status) bool { return p.Kind == "can" || p.Kind == "j1708" })
}

// Options are the operator's choices for one MCP server.
type Options struct {
	// Bundles to load (ResolveBundles): DefaultBundles when nil, with
	// the vehicle depth when d lists a CAN or J1708 port; "all" loads
	// every bundle.
	Bundles []string
	// MaxResponseBytes is the response budget; 0 means
	// DefaultMaxResponseBytes, and less than MinMaxResponseBytes is an error.
	MaxResponseBytes int
	// OutputSchemas advertises every tool's output schema in tools/list
	// (mcp.output_schemas). Off by default: they are three quarters of
	// tools/list, and every answer matches its schema either way.
	OutputSchemas bool
	// Audit, when set, records every tools/call (audited.go).
	Audit *audit.Log
	// Counts, when set, counts every tools/call by tool and outcome
	// (audited.go), for the metrics endpoint.
	Counts *audit.CallCounts
	// Logs, when set, is the BoxLog the caller's loggers (Deps.Log among
	// them) already write through, so the whole box's warnings reach the
	// sessions; when nil the server tees Deps.Log into one of its own.
	Logs *BoxLog
}

// NewServer builds the MCP server with the chosen bundles. An unknown
// bundle, a tool name registered twice (mcp-go's AddTools would silently
// replace the first), a Deps without a box-wide field (needBox) or
// without a store a loaded bundle needs is an error naming what is
// missing. The server bundle also gets describe_response_shape over
// every loaded tool.
func NewServer(d Deps, o Options) (*server.MCPServer, error) {
	if o.MaxResponseBytes == 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.MaxResponseBytes < MinMaxResponseBytes {
		return nil, fmt.Errorf("mcp.max_response_bytes %d: want at least %d", o.MaxResponseBytes, MinMaxResponseBytes)
	}
	if miss := d.missing(needBox); miss != "" {
		return nil, fmt.Errorf("the MCP server needs %s", miss)
	}
	o.Bundles = ResolveBundles(o.Bundles, hasVehiclePort(d))
	defs, err := loadBundles(d, o.Bundles)
	if err != nil {
		return nil, err
	}
	return build(d, o, defs, slices.Contains(o.Bundles, "server")), nil
}

// build registers defs (and describe_response_shape over them when
// withShape) on a new server with the cross-cutting middleware.
func build(d Deps, o Options, defs []toolDef, withShape bool) *server.MCPServer {
	s, _ := assemble(d, o, defs, withShape)
	return s
}

// assemble is build, also returning the server's subscription table
// for the tests that watch it empty.
func assemble(d Deps, o Options, defs []toolDef, withShape bool) (*server.MCPServer, *subscriptions) {
	// The box's warnings also reach the sessions (logging.go).
	var s *server.MCPServer
	logs := o.Logs
	if logs == nil {
		logs = NewBoxLog()
		d.Log = slog.New(logs.Handler(d.Log.Handler()))
	}
	infos := make([]toolInfo, len(defs))
	byName := map[string]toolInfo{}
	for i, t := range defs {
		infos[i] = t.info()
		byName[infos[i].name] = infos[i]
	}
	if withShape {
		shape := shapeTool(byName)
		defs = append(defs, shape)
		infos = append(infos, shape.info())
		byName[toolDescribeResponseShape] = infos[len(infos)-1]
	}
	loaded := map[string]mcpgo.Tool{}
	var tools []server.ServerTool
	handlers := map[string]server.ToolHandlerFunc{}
	for i, t := range defs {
		mt := infos[i].mcpTool(o.OutputSchemas)
		loaded[infos[i].name] = mt
		handlers[infos[i].name] = t.handler(d, infos[i], o.MaxResponseBytes)
		tools = append(tools, server.ServerTool{Tool: mt, Handler: handlers[infos[i].name]})
	}
	// The conformance suite's fixtures, in a build with the
	// mcpconformance tag only (conformance.go).
	fx := conformanceFixtures()
	for _, t := range fx.tools {
		loaded[t.Tool.Name] = t.Tool
		tools = append(tools, t)
	}
	names := map[string]bool{}
	for n := range loaded {
		names[n] = true
	}
	o.Counts.Know(names)
	// Live views and subscriptions (resources.go, subscribe.go) render
	// with the tools' own handlers; send is bound once s exists.
	v := newViews(d, handlers, needsOf(defs))
	subs := newSubscriptions(v, func(session, uri string) error {
		return s.SendNotificationToSpecificClient(session, string(mcpgo.MethodNotificationResourceUpdated), map[string]any{"uri": uri})
	})
	subs.fixed = fx.watched
	hooks := auditHooks(o.Audit, o.Counts, d.Log.Error)
	subs.hook(hooks)
	// send is called by a session's sender, which starts once s exists.
	logs.hook(hooks, func(session string, n mcpgo.LoggingMessageNotification) error {
		return s.SendLogMessageToSpecificClient(session, n)
	})
	// Outermost first: the HTTP splice (mcp/answerjson) takes the final text,
	// the audit sees the final outcome, the scope check
	// runs before any work, and recovery turns a panic into an envelope
	// the others can read.
	s = server.NewMCPServer("fieldtap", d.Info.Version,
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(true, false),
		server.WithPromptCapabilities(false),
		server.WithLogging(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completer{v}),
		server.WithResourceCompletionProvider(completer{v}),
		server.WithToolHandlerMiddleware(answerjson.Spliced),
		server.WithToolHandlerMiddleware(onTheWire(o.OutputSchemas)),
		server.WithToolHandlerMiddleware(audited(d, o.Audit, o.Counts)),
		server.WithToolHandlerMiddleware(scoped(d, loaded)),
		server.WithToolHandlerMiddleware(recovery(d)),
		server.WithHooks(hooks),
		server.WithInstructions(instructions),
		server.WithToolFilter(withInputSchemas(byName)),
	)
	s.AddTools(tools...)
	v.addResources(s)
	addFileResources(s, d.Files)
	addPrompts(s, func(tool string) bool { return handlers[tool] != nil })
	if len(fx.prompts) > 0 {
		s.AddPrompts(fx.prompts...)
	}
	if len(fx.resources) > 0 {
		s.AddResources(fx.resources...)
	}
	if len(fx.templates) > 0 {
		s.AddResourceTemplates(fx.templates...)
	}
	return s, subs
}

// loadBundles collects the named bundles' tools, refusing an unknown
// bundle, a tool name two bundles share and a bundle whose stores d
// lacks.
func loadBundles(d Deps, load []string) ([]toolDef, error) {
	all := allBundles()
	seen := map[string]string{}
	var tools []toolDef
	for _, name := range load {
		i := slices.IndexFunc(all, func(b bundle) bool { return b.name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown MCP bundle %q (have %v)", name, BundleNames())
		}
		if miss := d.missing(all[i].needs); miss != "" {
			return nil, fmt.Errorf("bundle %s needs %s", name, miss)
		}
		for _, t := range all[i].tools {
			n := t.toolName()
			if prev, dup := seen[n]; dup {
				return nil, fmt.Errorf("tool %s registered by bundles %s and %s", n, prev, name)
			}
			seen[n] = name
		}
		tools = append(tools, all[i].tools...)
	}
	return tools, nil
}

// needsOf is what every server needs and what the bundles of defs need:
// the stores the server-level users (completions, live views) may read
// beside the tools.
func needsOf(defs []toolDef) need {
	n := needBox
	for _, b := range allBundles() {
		if slices.ContainsFunc(b.tools, func(t toolDef) bool {
			return slices.ContainsFunc(defs, func(d toolDef) bool { return d.toolName() == t.toolName() })
		}) {
			n |= b.needs
		}
	}
	return n
}

const instructions = "fieldtap is a passive capture box (SPAN, CAN/J1939, J1708). " +
	"Every tool answers with one JSON envelope: ok, data or items+page, source, warnings, errors. " +
	"Start with capture_status to see which ports exist and whether they are counting."

// onTheWire sends structuredContent only when tools/list advertises the
// output schemas it matches: without them the text block carries the same
// JSON, and sending it twice doubled every answer's bytes and the
// transport's JSON work (docs/benchmarks.md). The audit, the counts and
// the live views still read the structured copy inside the server.
func onTheWire(outputSchemas bool) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		if outputSchemas {
			return next
		}
		return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			res, err := next(ctx, req)
			if res != nil {
				res.RawStructuredContent = nil
			}
			return res, err
		}
	}
}

// recovery turns a handler panic into a fail envelope, so a tool failure
// reaches the agent as isError, never as JSON-RPC -32603.
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

// Deps is what tools read: stores and functions, never drivers. Every
// server needs the box-wide fields (needBox); a bundle needs the stores
// its tools read (bundle.needs). NewServer refuses a Deps without them,
// so no tool checks a store for nil: a box without a port of some kind
// has that kind's stores, empty. The daemon fills them all.
type Deps struct {
	// The box as a whole.
	Info   ServerInfo
	Ports  PortLister
	Source func() SourceInfo
	Log    *slog.Logger
	// Coverage reports what an answer over a query covers, from the
	// box's counters (services/coverage).
	Coverage func(coverage.Query) coverage.Report
	// Files is the one sandbox (exports, evidence, captures) the file
	// resources and the HTTP GET read through.
	Files *sandbox.Sandbox

	// The CAN ports' stores.
	CAN   *canbus.Store
	J1939 *j1939.Store
	DBC   *dbc.Registry // databases dbc_load keeps
	UDS   *isotp.Store  // every CAN port's UDS transactions

	// The J1708 ports' store.
	J1587 *j1587.Store

	// The SPAN ports' SIP and media analysis.
	SIP      *sip.Store
	SIPStats SIPStats // the SPAN analyser's stream and decode counters
	// SIPExport writes export_capture's and export_vcon's files.
	SIPExport *sip.Exporter
	// Media is the RTP analyser the SIP analyser feeds.
	Media         *rtp.Analyser
	MediaInterval time.Duration // its per-interval figure length
	// SIPSecurity are sip_security_findings' thresholds; the zero value
	// takes sipsecurity.Defaults.
	SIPSecurity sipsecurity.Thresholds
	// Trunk holds the SIP ports' TCP flows and the SIPS ports' TLS
	// handshakes, fed by the SPAN analyser.
	Trunk *trunk.Table

	// Transmit is the gatekeeper every transmit tool goes through.
	Transmit *transmit.Service

	BlackBox BlackBox // the recorder, evidence and capture files (bundle_blackbox.go)

	// Rules is the box's rule watch (rule_status); nil without [[rule]].
	Rules *rules.Engine
	// Marks are the moments marked by the confirm button or the mark
	// tool (services/marks).
	Marks *marks.Store
}
