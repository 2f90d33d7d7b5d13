package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/docs"
	"fieldtap/mcp/auth"
)

// Port kinds a live view's revision is read from (ports.Status.Kind).
const (
	portKindEthernet = "ethernet"
	portKindCAN      = "can"
)

const mimeJSON = "application/json"

// liveView is a resource that is one tool's answer: the resource is
// rendered by the tool's own handler with fixed arguments, so the view
// and the tool cannot disagree. A view whose URI has one {variable} is a
// template; a value the tool refuses as an argument (an unknown port, a
// malformed Call-ID) is an empty page, as an unknown Call-ID is.
type liveView struct {
	uri  string
	name string
	desc string
	tool string
	// args turns the template's variable (empty for a plain view) into
	// the tool's arguments.
	args func(v string) map[string]any
	// kinds are the port kinds whose stores the view reads: their
	// counters are the view's revision (subscribe.go). nil: every port;
	// empty: none.
	kinds []string
	// rules: the view shows the rule engine's states, so each state
	// change moves its revision.
	rules bool
}

func noViewArgs(string) map[string]any { return map[string]any{} }

// liveViews are every view this build offers; one is listed only when
// its tool is loaded.
var liveViews = []liveView{
	{uri: "fieldtap://live/dialogs", name: "live dialogs", tool: "list_dialogs", args: noViewArgs, kinds: []string{portKindEthernet},
		desc: "SIP dialogs as list_dialogs answers with no arguments (the first page, oldest first)."},
	{uri: "fieldtap://live/dialogs/{call_id}", name: "live dialog", tool: "list_dialogs", args: dialogFilter, kinds: []string{portKindEthernet},
		desc: "One Call-ID as list_dialogs answers for it; an unknown Call-ID is an empty page."},
	{uri: "fieldtap://live/streams", name: "live RTP streams", tool: "rtp_streams", args: noViewArgs, kinds: []string{portKindEthernet},
		desc: "RTP streams as rtp_streams answers with no arguments."},
	{uri: "fieldtap://live/streams/{call_id}", name: "live RTP streams of a call", tool: "rtp_streams", kinds: []string{portKindEthernet},
		args: func(v string) map[string]any { return map[string]any{"call_id": v} },
		desc: "One call's RTP streams as rtp_streams answers for its call_id; an unknown Call-ID is an empty page."},
	{uri: "fieldtap://live/registrations", name: "live registrations", tool: "sip_registrations", args: noViewArgs, kinds: []string{portKindEthernet},
		desc: "Registrations per address of record as sip_registrations answers with no arguments (the first page)."},
	{uri: "fieldtap://live/can/{port}", name: "live CAN frames", tool: "can_frames", kinds: []string{portKindCAN},
		args: func(v string) map[string]any { return map[string]any{"port": v} },
		desc: "One CAN port's stored frames as can_frames answers for it; an unknown port is an empty page."},
	{uri: "fieldtap://live/faults", name: "live J1939 faults", tool: "j1939_faults", args: noViewArgs, kinds: []string{portKindCAN},
		desc: "Every DTC of the DM1s and DM2s seen, per source, as j1939_faults answers with no arguments."},
	{uri: "fieldtap://live/j1587", name: "live J1587 summary", tool: "j1587_summary", args: noViewArgs, kinds: []string{portKindJ1708},
		desc: "The J1708/J1587 overview as j1587_summary answers with no arguments."},
	{uri: "fieldtap://live/timeline", name: "live timeline", tool: "what_happened", args: noViewArgs, rules: true,
		desc: "Every port's events of the last minute around the newest frame, as what_happened answers with no arguments (the first page)."},
	{uri: "fieldtap://live/rules", name: "live rules", tool: toolRuleStatus, args: noViewArgs, kinds: []string{}, rules: true,
		desc: "Every rule's verdict and the first page of its state changes, as rule_status answers with no arguments; updated on each state change."},
	{uri: "fieldtap://status", name: "capture status", tool: toolCaptureStatus, args: noViewArgs,
		desc: "Ports, board and memory budget as capture_status answers."},
}

// dialogFilter selects one Call-ID in the filter language (docs/filter.md),
// quoted with a quote it does not contain. A Call-ID holding both quotes
// cannot be written as a filter value: no arguments, and the view answers
// an empty page (nil args).
func dialogFilter(id string) map[string]any {
	for _, q := range []string{`"`, `'`} {
		if !strings.Contains(id, q) {
			return map[string]any{"filter": "call_id == " + q + id + q}
		}
	}
	return nil
}

func (v liveView) template() bool { return strings.Contains(v.uri, "{") }

// match reports whether uri names this view and returns the template's
// variable, percent-decoded. A template variable is one path segment.
func (v liveView) match(uri string) (string, bool) {
	i := strings.Index(v.uri, "{")
	if i < 0 {
		return "", uri == v.uri
	}
	rest, found := strings.CutPrefix(uri, v.uri[:i])
	if !found || rest == "" || strings.ContainsAny(rest, "/?#") {
		return "", false
	}
	val, err := url.PathUnescape(rest)
	if err != nil || val == "" {
		return "", false
	}
	return val, true
}

// refPage is a reference page embedded from docs/.
type refPage struct {
	uri, name, desc, text string
}

var refPages = []refPage{
	{uri: "fieldtap://docs/filter", name: "filter language", desc: "The filter language of list_dialogs, await_condition and the other filter arguments (docs/filter.md).", text: docs.Filter},
	{uri: "fieldtap://docs/tools", name: "tool reference", desc: "Every tool, bundle and argument (docs/mcp-tools.md).", text: docs.Tools},
	{uri: "fieldtap://docs/transmit-safety", name: "transmit safety model", desc: "How a transmit is planned, gated, confirmed and audited (docs/transmit-safety.md).", text: docs.TransmitSafety},
}

// views renders live views with the loaded tools' own handlers (not the
// middleware chain: a resource read is not a tool call, and is not
// audited or counted as one).
type views struct {
	d        Deps
	handlers map[string]server.ToolHandlerFunc
	loaded   []liveView
	// provided are the stores the loaded bundles need: a view's revision
	// and a completion read no other (needsOf).
	provided need
}

func newViews(d Deps, handlers map[string]server.ToolHandlerFunc, provided need) *views {
	v := &views{d: d, handlers: handlers, provided: provided}
	for _, lv := range liveViews {
		if handlers[lv.tool] != nil {
			v.loaded = append(v.loaded, lv)
		}
	}
	return v
}

// find is the loaded view uri names, and its template variable.
func (v *views) find(uri string) (liveView, string, bool) {
	for _, lv := range v.loaded {
		if val, ok := lv.match(uri); ok {
			return lv, val, true
		}
	}
	return liveView{}, "", false
}

// rendering is one view as the tool answered it: the envelope and the
// provenance note when the answer carries sender text.
type rendering struct {
	envelope, note string
}

// digest is what a subscriber is told about when it changes: the answer
// without its coverage counters (the window's end and the stores' counts
// move with every frame on a live bus) nor the warnings that spell them,
// but with whether it is whole and each port's state, so a port that
// goes away is news and a ticking counter is not.
func (r rendering) digest() [sha256.Size]byte {
	var env map[string]json.RawMessage
	if json.Unmarshal([]byte(r.envelope), &env) != nil {
		return sha256.Sum256([]byte(r.envelope + r.note))
	}
	var cov struct {
		Complete bool `json:"complete"`
		Ports    []struct {
			Port  string `json:"port"`
			State string `json:"state"`
		} `json:"ports"`
	}
	_ = json.Unmarshal(env["coverage"], &cov) // absent: the zero summary
	delete(env, "coverage")
	delete(env, "warnings")
	data, err := json.Marshal(env) // a map's keys are sorted: the same answer, the same bytes
	if err != nil {
		return sha256.Sum256([]byte(r.envelope + r.note))
	}
	h := sha256.New()
	h.Write(data)
	fmt.Fprintf(h, "%v", cov)
	h.Write([]byte(r.note))
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// render answers uri exactly as the view's tool answers its arguments.
func (v *views) render(ctx context.Context, lv liveView, val string) (rendering, error) {
	args := lv.args(val)
	if args == nil {
		return v.emptyPage(fmt.Sprintf("%s cannot select %q", lv.tool, val)), nil
	}
	req := mcpgo.CallToolRequest{}
	req.Params.Name = lv.tool
	req.Params.Arguments = args
	res, err := v.handlers[lv.tool](ctx, req)
	if err != nil {
		return rendering{}, err
	}
	var r rendering
	for i, c := range res.Content {
		t, isText := c.(mcpgo.TextContent)
		if !isText {
			return rendering{}, fmt.Errorf("%s answered a %T block", lv.tool, c)
		}
		if i == 0 {
			r.envelope = t.Text
		} else {
			r.note = t.Text
		}
	}
	if lv.template() && res.IsError {
		var f Failure
		if json.Unmarshal([]byte(r.envelope), &f) == nil && len(f.Errors) > 0 && f.Errors[0].Code == CodeInvalidArgument {
			return v.emptyPage(f.Errors[0].Message), nil
		}
	}
	return r, nil
}

// emptyPage is a live view's answer for an id the box does not hold: a
// list envelope with no rows and a warning that says why.
func (v *views) emptyPage(why string) rendering {
	b, _ := json.Marshal(ListEnvelope[struct{}]{OK: true, Items: []struct{}{}, Page: &Page{}, Source: v.d.Source(), Warnings: []string{why}, Errors: []ErrorInfo{}})
	return rendering{envelope: string(b)}
}

// read is the resources/read handler of every live view.
func (v *views) read(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	if c := auth.CallerOf(ctx); !c.May(auth.ScopeRead) {
		return nil, fmt.Errorf("resources need the %s scope; token %s has %s", auth.ScopeRead, c.TokenID, strings.Join(c.Scopes, ","))
	}
	uri := req.Params.URI
	lv, val, found := v.find(uri)
	if !found {
		return nil, errors.New("no live view " + uri)
	}
	r, err := v.render(ctx, lv, val)
	if err != nil {
		return nil, err
	}
	out := []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: uri, MIMEType: mimeJSON, Text: r.envelope}}
	if r.note != "" {
		out = append(out, mcpgo.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: r.note})
	}
	return out, nil
}

// addResources registers the loaded live views and the reference pages.
func (v *views) addResources(s *server.MCPServer) {
	for _, lv := range v.loaded {
		if lv.template() {
			s.AddResourceTemplate(mcpgo.NewResourceTemplate(lv.uri, lv.name, mcpgo.WithTemplateDescription(lv.desc), mcpgo.WithTemplateMIMEType(mimeJSON)), v.read)
			continue
		}
		s.AddResource(mcpgo.NewResource(lv.uri, lv.name, mcpgo.WithResourceDescription(lv.desc), mcpgo.WithMIMEType(mimeJSON)), v.read)
	}
	for _, p := range refPages {
		text := p.text
		s.AddResource(mcpgo.NewResource(p.uri, p.name, mcpgo.WithResourceDescription(p.desc), mcpgo.WithMIMEType("text/markdown")),
			func(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
				if c := auth.CallerOf(ctx); !c.May(auth.ScopeRead) {
					return nil, fmt.Errorf("resources need the %s scope", auth.ScopeRead)
				}
				return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}, nil
			})
	}
}
