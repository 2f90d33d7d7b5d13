package mcp

import (
	"fieldtap/services/budget"
	"fieldtap/services/ports"
)

// Tool names in the server bundle.
const (
	toolCaptureStatus      = "capture_status"
	toolServerCapabilities = "server_capabilities"
)

// PortLister is the view of the capture ports tools read.
type PortLister interface {
	Snapshot() []ports.Status
}

// ServerInfo describes this build and this run for server_capabilities.
type ServerInfo struct {
	Version    string   `json:"version"`
	Build      Build    `json:"build"`
	Board      string   `json:"board"`
	Transport  string   `json:"transport"`            // the one serving this session
	Transports []string `json:"transports_available"` // compiled in
	Listen     string   `json:"listen,omitempty"`     // HTTP address, when serving HTTP
	Bundles    []string `json:"bundles_loaded"`
	Compiled   []string `json:"bundles_compiled"`
	// OutputSchemas says whether tools/list carries output schemas
	// (mcp.output_schemas); describe_response_shape always has them.
	OutputSchemas bool `json:"output_schemas"`
}

// Build identifies the binary.
type Build struct {
	GoVersion string `json:"go_version"`
	Revision  string `json:"revision"`
	Modified  bool   `json:"modified"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

// BoardReporter is the board's bring-up outcomes and transmit-arm input.
// The daemon's ports.Registry is both a PortLister and a BoardReporter; a
// PortLister that is not reports no parts and no arm input.
type BoardReporter interface {
	BoardParts() []ports.BoardPart
	Arm() ports.Arm
}

type noArgs struct{}

// BudgetReporter is the memory budget and every store's share and use;
// the daemon's ports.Registry is one.
type BudgetReporter interface {
	Budget() budget.Status
}

// captureStatus is capture_status's answer. Its ports are ports.Status
// as they are, a document (docs/architecture.md): what the status page,
// open_capture and this answer show of a port is one thing.
type captureStatus struct {
	Ports        []ports.Status  `json:"ports"`
	Board        []boardPartRow  `json:"board" jsonschema:"bring-up of the SPAN interface, USB gadget and GPIO lines, in order"`
	TransmitArm  armRow          `json:"transmit_arm"`
	MemoryBudget memoryBudgetRow `json:"memory_budget" jsonschema:"the one memory budget: where it came from, the stores' pool, and every store's share with what it holds"`
	Recorder     recorderSection `json:"recorder" jsonschema:"the recorder on disk: state, segments and bytes against the quota, rotations, gaps and bounds hit, pins, evidence, downloads (bundle_blackbox.go)"`
}

// boardPartRow is one part of the board's bring-up.
type boardPartRow struct {
	Part    string `json:"part" jsonschema:"span IF, gadget IF, gpio"`
	Outcome string `json:"outcome" jsonschema:"up, skipped or failed"`
	Detail  string `json:"detail" jsonschema:"what was done, or why it was skipped or failed"`
}

func boardPartRowOf(p ports.BoardPart) boardPartRow { return boardPartRow(p) }

// armRow is the transmit-arm input.
type armRow struct {
	On      bool   `json:"on"`
	Input   string `json:"input" jsonschema:"gpio, file or none"`
	Where   string `json:"where" jsonschema:"the GPIO line (CHIP:OFFSET) or the file; for none, why there is no input"`
	Changes uint64 `json:"changes" jsonschema:"on/off transitions seen since start (GPIO only)"`
}

// memoryBudgetRow is the memory budget; each store's share and use is
// budget.Use, the document a port's status holds too.
type memoryBudgetRow struct {
	BudgetBytes int64        `json:"budget_bytes"`
	From        string       `json:"from"`
	PoolBytes   int64        `json:"pool_bytes"`   // the stores' part of the budget
	SharesBytes int64        `json:"shares_bytes"` // every share added up: at most pool_bytes
	UsedBytes   int64        `json:"used_bytes"`
	Stores      []budget.Use `json:"stores"`
}

// noBoard is what capture_status says without a BoardReporter.
var noBoard = ports.Arm{Input: ports.ArmInputNone, Where: "this server has no board view"}

func readCaptureStatus(d Deps) captureStatus {
	st := captureStatus{Ports: d.Ports.Snapshot(), Board: []boardPartRow{}, TransmitArm: armRow(noBoard), MemoryBudget: memoryBudgetRow{Stores: []budget.Use{}}}
	if b, isBoard := d.Ports.(BoardReporter); isBoard {
		st.Board, st.TransmitArm = mapRows(b.BoardParts(), boardPartRowOf), armRow(b.Arm())
	}
	if b, has := d.Ports.(BudgetReporter); has {
		st.MemoryBudget = memoryBudgetRow(b.Budget())
	}
	st.Recorder = readRecorderSection(d)
	return st
}

// serverTools is the server bundle; describe_response_shape joins it in
// NewServer, since it describes whatever else is loaded.
var serverTools = []toolDef{captureStatusTool, serverCapabilities}

var captureStatusTool = tool[noArgs, captureStatus]{
	name:  toolCaptureStatus,
	reads: readsNothing,
	desc: "Every capture port: kind, source, live, frames, bytes, drops by cause, errors by reason, first/last frame time, whether a finite source is exhausted (every frame it read consumed by the analysers), and the port's frame store; " +
		"the board's bring-up parts (up, skipped or failed, and why); whether the transmit-arm input is on and where it comes from; the memory budget with every store's share and use; the recorder. Call it first, and again to see counters move.",
	hints: readOnly(),
	run:   func(c *call, _ noArgs) (captureStatus, error) { return readCaptureStatus(c.d), nil },
}

type serverCapabilitiesOut struct {
	ServerInfo
	ErrorCodes []ErrorCode `json:"error_codes" jsonschema:"every error code an answer can carry, with its meaning"`
}

var serverCapabilities = tool[noArgs, serverCapabilitiesOut]{
	name:  toolServerCapabilities,
	reads: readsNothing,
	desc:  "This box: version and build, board profile, MCP transports, which tool bundles are loaded now versus compiled in, and the error codes answers can carry.",
	hints: readOnly(),
	run: func(c *call, _ noArgs) (serverCapabilitiesOut, error) {
		return serverCapabilitiesOut{ServerInfo: c.d.Info, ErrorCodes: ErrorCodes}, nil
	},
}
