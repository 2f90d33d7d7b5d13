package mcp

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"fieldtap/mcp/auth"
	"fieldtap/services/j1939"
	"fieldtap/services/sip"
)

// maxCompletions is the specification's bound on completion values.
const maxCompletions = 100

// completer answers completion/complete for prompt and resource-template
// arguments that name something the box holds, read from the stores at
// the moment of the request (never cached: a Call-ID seen a second ago
// is offered). An argument it does not know is answered empty, and so is
// one whose store no loaded bundle needs.
type completer struct {
	v *views
}

// holder is what the box holds for one argument, most useful first
// (newest Call-IDs first), read from the stores of need.
type holder struct {
	need   need
	values func(ctx context.Context, uri string, known map[string]string) []string
}

// holders maps an argument name to its holder.
func (c completer) holders() map[string]holder {
	return map[string]holder{
		"call_id":   {needSIP, c.callIDs},
		"stream_id": {needMedia, c.streamIDs},
		"port":      {needPorts, c.ports},
		"pgn":       {needJ1939, c.pgns},
		"spn":       {needJ1939, c.spns},
		"sa":        {needJ1939, c.sources},
		"mid":       {needJ1587, c.mids},
		"pid":       {needJ1587, c.pids},
		"plan_id":   {needTransmit, c.plans},
		"tool": {0, func(context.Context, string, map[string]string) []string {
			return slices.Sorted(maps.Keys(c.v.handlers))
		}},
		"dimension": {0, func(context.Context, string, map[string]string) []string { return slices.Clone(sip.Dimensions) }},
		"field":     {0, func(context.Context, string, map[string]string) []string { return filterFields() }},
	}
}

func filterFields() []string {
	out := make([]string, len(sip.Schema))
	for i, f := range sip.Schema {
		out[i] = f.Name
	}
	return out
}

// complete offers the held values that start with the typed prefix, at
// most maxCompletions, with the total that matched. A filter argument
// completes its last word as a field name.
func (c completer) complete(ctx context.Context, uri string, arg mcpgo.CompleteArgument, cc mcpgo.CompleteContext) *mcpgo.Completion {
	if !auth.CallerOf(ctx).May(auth.ScopeRead) {
		return &mcpgo.Completion{Values: []string{}}
	}
	name, prefix, head := arg.Name, arg.Value, ""
	if name == "filter" {
		i := strings.LastIndexAny(arg.Value, " ()!") + 1
		name, head, prefix = "field", arg.Value[:i], arg.Value[i:]
	}
	held, known := c.holders()[name]
	if !known || !c.v.provided.has(held.need) {
		return &mcpgo.Completion{Values: []string{}}
	}
	var match []string
	seen := map[string]bool{}
	for _, v := range held.values(ctx, uri, cc.Arguments) {
		if strings.HasPrefix(v, prefix) && !seen[v] {
			seen[v] = true
			match = append(match, head+v)
		}
	}
	out := &mcpgo.Completion{Values: match[:min(len(match), maxCompletions)], Total: len(match), HasMore: len(match) > maxCompletions}
	if out.Values == nil {
		out.Values = []string{}
	}
	return out
}

func (c completer) CompletePromptArgument(ctx context.Context, _ string, arg mcpgo.CompleteArgument, cc mcpgo.CompleteContext) (*mcpgo.Completion, error) {
	return c.complete(ctx, "", arg, cc), nil
}

func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcpgo.CompleteArgument, cc mcpgo.CompleteContext) (*mcpgo.Completion, error) {
	return c.complete(ctx, uri, arg, cc), nil
}

// callIDs are the dialogs' Call-IDs, newest first.
func (c completer) callIDs(context.Context, string, map[string]string) []string {
	ds := c.v.d.SIP.Snapshot().Dialogs
	out := make([]string, 0, len(ds))
	for i := len(ds) - 1; i >= 0; i-- {
		out = append(out, ds[i].CallID)
	}
	return out
}

// streamIDs are the RTP streams, newest first, of one call when the
// request already names a call_id.
func (c completer) streamIDs(_ context.Context, _ string, known map[string]string) []string {
	ss := c.v.d.Media.Streams(false)
	var out []string
	for i := len(ss) - 1; i >= 0; i-- {
		if id := known["call_id"]; id == "" || ss[i].CallID == id {
			out = append(out, ss[i].ID)
		}
	}
	return out
}

// ports are the box's ports; only the CAN ports for live/can/{port}.
func (c completer) ports(_ context.Context, uri string, _ map[string]string) []string {
	var out []string
	for _, p := range c.v.d.Ports.Snapshot() {
		if !strings.HasPrefix(uri, "fieldtap://live/can/") || p.Kind == portKindCAN {
			out = append(out, p.Name)
		}
	}
	return out
}

// pgns are every PGN the J1939 store counted, in ascending order (at
// most MaxPorts × MaxPGNs, the store's own bound), then the PGNs of the
// decoding catalogue the bus did not carry, so a PGN the box has not
// heard yet can still be typed.
func (c completer) pgns(context.Context, string, map[string]string) []string {
	seen := c.v.d.J1939.SeenPGNs()
	out := make([]string, 0, len(seen))
	for _, p := range seen {
		out = append(out, strconv.FormatUint(uint64(p), 10))
	}
	for _, p := range c.v.d.J1939.Catalogue().PGNs() {
		if _, heard := slices.BinarySearch(seen, p); !heard {
			out = append(out, strconv.FormatUint(uint64(p), 10))
		}
	}
	return out
}

// sampledSPNs are the SPNs with a sample in the store.
func (c completer) sampledSPNs() map[uint32]bool {
	set := map[uint32]bool{}
	c.v.d.J1939.Samples().Range(0, func(_ uint64, s j1939.Sample) bool {
		set[s.SPN] = true
		return true
	})
	return set
}

// spns are the sampled SPNs and the SPNs of the DTCs the faults carry.
func (c completer) spns(context.Context, string, map[string]string) []string {
	set := c.sampledSPNs()
	for _, f := range c.v.d.J1939.Faults() {
		for _, d := range f.DTCs {
			set[d.SPN] = true
		}
	}
	return formatSorted(set)
}

// sources are the J1939 source addresses seen, on the named port when
// the request names one.
func (c completer) sources(_ context.Context, _ string, known map[string]string) []string {
	set := map[uint32]bool{}
	for _, ps := range c.v.d.J1939.Summary() {
		if p := known["port"]; p == "" || ps.Port == p {
			for _, sa := range ps.SourceAddresses {
				set[uint32(sa)] = true
			}
		}
	}
	return formatSorted(set)
}

// mids are the J1587 MIDs heard on every J1708 port.
func (c completer) mids(context.Context, string, map[string]string) []string {
	set := map[uint32]bool{}
	for _, m := range c.v.d.J1587.Summary().MIDs {
		set[uint32(m.MID)] = true
	}
	return formatSorted(set)
}

// pids are the J1587 PIDs heard, from the named MID when the request
// names one.
func (c completer) pids(_ context.Context, _ string, known map[string]string) []string {
	set := map[uint32]bool{}
	for _, m := range c.v.d.J1587.Summary().MIDs {
		if k := known["mid"]; k != "" && k != strconv.Itoa(m.MID) {
			continue
		}
		for _, v := range c.v.d.J1587.Parameters(m.MID) {
			set[uint32(v.PID)] = true
		}
	}
	return formatSorted(set)
}

// plans are the caller's own transmit plans: plans belong to the token
// and session that made them, so no one is offered another's.
func (c completer) plans(ctx context.Context, _ string, _ map[string]string) []string {
	var out []string
	for _, p := range c.v.d.Transmit.Plans(caller(ctx).Owner()) {
		out = append(out, p.ID)
	}
	return out
}

func formatSorted(set map[uint32]bool) []string {
	out := make([]string, 0, len(set))
	for _, v := range slices.Sorted(maps.Keys(set)) {
		out = append(out, strconv.FormatUint(uint64(v), 10))
	}
	return out
}
