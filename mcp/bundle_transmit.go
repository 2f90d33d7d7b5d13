package mcp

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
	"fieldtap/services/transmit"
)

// Tool names in the transmit bundle. Every tool that can transmit
// defaults to dry_run: true; the gates live in services/transmit.
const (
	toolCANSend         = "can_send"
	toolJ1939Request    = "j1939_request"
	toolJ1939RequestDM  = "j1939_request_dm"
	toolUDSRequest      = "uds_request"
	toolReplayFrames    = "replay_frames"
	toolJ1708Send       = "j1708_send"
	toolTransmitStatus  = "transmit_status"
	toolTransmitPlans   = "transmit_plans"
	toolTransmitExecute = "transmit_execute"
)

type canSendFrame struct {
	ID       string  `json:"id" jsonschema:"hex CAN id; more than 3 digits is 29-bit unless extended says otherwise"`
	Extended *bool   `json:"extended,omitempty" jsonschema:"force 29-bit (true) or 11-bit (false)"`
	Data     string  `json:"data,omitempty" jsonschema:"hex data, 0 to 8 bytes"`
	DelayMS  float64 `json:"delay_ms,omitempty" jsonschema:"wait after the previous frame, milliseconds"`
}

type canSendIn struct {
	Port   string         `json:"port" jsonschema:"CAN port name (transmit_status lists them)"`
	Frames []canSendFrame `json:"frames" jsonschema:"the frames, in order"`
	txGate
}

type j1939RequestIn struct {
	Port          string `json:"port" jsonschema:"CAN port name"`
	PGN           int    `json:"pgn" jsonschema:"the PGN asked for, e.g. 65260 for the VIN"`
	Destination   *int   `json:"destination,omitempty" jsonschema:"address asked, 0..255; default 255 (every ECU, answers come by BAM)"`
	SourceAddress *int   `json:"source_address,omitempty" jsonschema:"this box's address, default 249 (0xF9, off-board diagnostic tool)"`
	Priority      *int   `json:"priority,omitempty" jsonschema:"0..7, default 6"`
	txGate
}

type j1939RequestDMIn struct {
	Port          string `json:"port" jsonschema:"CAN port name"`
	DM            string `json:"dm" jsonschema:"DM1 (active faults), DM2 (previously active), DM3 (CLEAR previously active) or DM11 (CLEAR active); DM3 and DM11 erase fault memory and need a person's confirmation"`
	Destination   *int   `json:"destination,omitempty" jsonschema:"address asked, default 255 (every ECU)"`
	SourceAddress *int   `json:"source_address,omitempty" jsonschema:"default 249 (0xF9)"`
	txGate
}

type udsRequestIn struct {
	Port       string `json:"port" jsonschema:"CAN port name"`
	Service    string `json:"service" jsonschema:"session_control (0x10), read_did (0x22), read_dtc (0x19) or tester_present (0x3E)"`
	Session    int    `json:"session,omitempty" jsonschema:"session_control: 1 default, 3 extended (2 programming is refused)"`
	DID        string `json:"did,omitempty" jsonschema:"read_did: 4 hex digits, e.g. F190 for the VIN"`
	DTCReport  int    `json:"dtc_report,omitempty" jsonschema:"read_dtc sub-function: 1 count by mask, 2 by mask (default), 10 supported"`
	StatusMask *int   `json:"status_mask,omitempty" jsonschema:"read_dtc status mask, default 255"`
	RequestID  string `json:"request_id,omitempty" jsonschema:"hex request id, default 7E0"`
	ResponseID string `json:"response_id,omitempty" jsonschema:"hex response id, default 7E8"`
	NoPadding  bool   `json:"no_padding,omitempty" jsonschema:"send short frames instead of padding to 8 bytes with AA"`
	txGate
}

type replayIn struct {
	SourcePort string `json:"source_port" jsonschema:"CAN port whose stored frames are replayed"`
	Port       string `json:"port,omitempty" jsonschema:"CAN port to send on, default source_port"`
	Since      string `json:"since,omitempty" jsonschema:"RFC 3339: frames at or after"`
	Until      string `json:"until,omitempty" jsonschema:"RFC 3339: frames before"`
	ID         string `json:"id,omitempty" jsonschema:"hex id to match (with mask)"`
	Mask       string `json:"mask,omitempty" jsonschema:"hex mask, default all 29 bits"`
	MaxFrames  int    `json:"max_frames,omitempty" jsonschema:"refuse a window with more frames than this, 1..256 (default 256)"`
	txGate
}

type j1708SendIn struct {
	Port string `json:"port" jsonschema:"J1708 port name"`
	MID  int    `json:"mid" jsonschema:"message identifier 0..255 (this box's MID)"`
	Data string `json:"data" jsonschema:"hex bytes after the MID; the checksum is added"`
	txGate
}

type planIDIn struct {
	PlanID    string `json:"plan_id" jsonschema:"a plan_id from a dry run"`
	AckActive bool   `json:"ack_active,omitempty" jsonschema:"must be true"`
}

type plansIn struct {
	PlanID string `json:"plan_id,omitempty" jsonschema:"one plan; empty lists every live plan"`
	Projection
}

func transmitTools(d Deps) []server.ServerTool {
	dryNote := " Defaults to dry_run: true, which returns the plan (every frame byte for byte, risk, load, what it cannot know) and sends nothing; sending needs ack_active: true and passes every transmit gate (docs/transmit-safety.md)."
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolJ1939Request,
				mcpgo.WithDescription("Plan or send one J1939 Request (PGN 59904) for a PGN and collect the answers (direct or BAM)."+dryNote),
				inputSchema[j1939RequestIn](), transmits(false), outputSchema[txOut]()),
			Handler: txHandler(d, func(ctx context.Context, req mcpgo.CallToolRequest, in j1939RequestIn) *mcpgo.CallToolResult {
				return planAndMaybeRun(ctx, d, req, in.txGate, func() (transmit.Spec, error) {
					dst, src, pri, err := j1939Addrs(in.Destination, in.SourceAddress, in.Priority)
					if err != nil {
						return transmit.Spec{}, err
					}
					if in.PGN < 0 {
						return transmit.Spec{}, fmt.Errorf("pgn %d is negative", in.PGN)
					}
					return transmit.J1939Request{Port: in.Port, PGN: uint32(in.PGN), Destination: dst, Source: src, Priority: pri}.Spec()
				})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1939RequestDM,
				mcpgo.WithDescription("Plan or send a J1939 diagnostic-message request: DM1/DM2 read faults; DM3/DM11 CLEAR them (erase-class: refused unless a person confirms through elicitation)."+dryNote),
				inputSchema[j1939RequestDMIn](), transmits(true), outputSchema[txOut]()),
			Handler: txHandler(d, func(ctx context.Context, req mcpgo.CallToolRequest, in j1939RequestDMIn) *mcpgo.CallToolResult {
				return planAndMaybeRun(ctx, d, req, in.txGate, func() (transmit.Spec, error) {
					dst, src, pri, err := j1939Addrs(in.Destination, in.SourceAddress, nil)
					if err != nil {
						return transmit.Spec{}, err
					}
					return transmit.J1939RequestDM(in.Port, strings.ToUpper(in.DM), dst, src, pri)
				})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolUDSRequest,
				mcpgo.WithDescription("Plan or send one UDS request over ISO-TP (0x10 session control, 0x22 read DID, 0x19 read DTCs, 0x3E tester present); a multi-frame answer gets flow control and is decoded, negative responses are named."+dryNote),
				inputSchema[udsRequestIn](), transmits(false), outputSchema[txOut]()),
			Handler: txHandler(d, func(ctx context.Context, req mcpgo.CallToolRequest, in udsRequestIn) *mcpgo.CallToolResult {
				return planAndMaybeRun(ctx, d, req, in.txGate, func() (transmit.Spec, error) { return udsSpec(in) })
			}),
		},
		{
			Tool: mcpgo.NewTool(toolCANSend,
				mcpgo.WithDescription("Plan or send raw CAN frames given byte for byte (actuate-class at least; a recognised clear command is erase-class)."+dryNote),
				inputSchema[canSendIn](), transmits(true), outputSchema[txOut]()),
			Handler: txHandler(d, func(ctx context.Context, req mcpgo.CallToolRequest, in canSendIn) *mcpgo.CallToolResult {
				return planAndMaybeRun(ctx, d, req, in.txGate, func() (transmit.Spec, error) {
					frames, err := parseFrames(in.Frames)
					return transmit.CANSend(in.Port, frames), err
				})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolReplayFrames,
				mcpgo.WithDescription("Plan or send a replay of a captured window of one CAN port, with its captured timing (at most 256 frames; a larger window is refused, never cut)."+dryNote),
				inputSchema[replayIn](), transmits(true), outputSchema[txOut]()),
			Handler: txHandler(d, func(ctx context.Context, req mcpgo.CallToolRequest, in replayIn) *mcpgo.CallToolResult {
				return planAndMaybeRun(ctx, d, req, in.txGate, func() (transmit.Spec, error) { return replaySpec(d, in) })
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1708Send,
				mcpgo.WithDescription("Plan or send one J1708 message: MID and data, checksum added."+dryNote),
				inputSchema[j1708SendIn](), transmits(true), outputSchema[txOut]()),
			Handler: txHandler(d, func(ctx context.Context, req mcpgo.CallToolRequest, in j1708SendIn) *mcpgo.CallToolResult {
				return planAndMaybeRun(ctx, d, req, in.txGate, func() (transmit.Spec, error) {
					if in.MID < 0 || in.MID > 255 {
						return transmit.Spec{}, fmt.Errorf("mid %d: want 0..255", in.MID)
					}
					data, err := hex.DecodeString(strings.ReplaceAll(in.Data, " ", ""))
					if err != nil {
						return transmit.Spec{}, fmt.Errorf("data %q is not hex", in.Data)
					}
					return transmit.J1708Send(in.Port, byte(in.MID), data)
				})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolTransmitExecute,
				mcpgo.WithDescription("Run exactly the stored plan a person read (from any dry run), once, through every transmit gate; asks a person through elicitation where the client supports it."),
				inputSchema[planIDIn](), transmits(true), outputSchema[txOut]()),
			Handler: txHandler(d, func(ctx context.Context, req mcpgo.CallToolRequest, in planIDIn) *mcpgo.CallToolResult {
				if planID, tok, ok := parseState(req.Params.RequestState); ok {
					return execute(ctx, d, req, planID, in.AckActive, tok)
				}
				return execute(ctx, d, req, in.PlanID, in.AckActive, "")
			}),
		},
		{
			Tool: mcpgo.NewTool(toolTransmitStatus,
				mcpgo.WithDescription("The transmitter: per port whether transmit is enabled, has a writer, is armed, its mode and rate limit, measured load; the load ceiling, plan store and recent transmissions and refusals."),
				readOnly(), outputSchema[transmit.Status]()),
			Handler: txHandler(d, func(ctx context.Context, _ mcpgo.CallToolRequest, _ noArgs) *mcpgo.CallToolResult {
				return ok(d.Source(), d.Transmit.Status(caller(ctx).Owner()))
			}),
		},
		{
			Tool: mcpgo.NewTool(toolTransmitPlans,
				mcpgo.WithDescription("Stored plans, newest first (they expire; a run plan is marked executed), or one plan by id."),
				inputSchema[plansIn](), readOnly(), listOutput[planRow]()),
			Handler: listHandler[plansIn, planRow](d, []string{"plan_id"}, func(ctx context.Context, in plansIn) *mcpgo.CallToolResult {
				if d.Transmit == nil {
					return fail(d.Source(), codeNoService, "this box has no transmitter", "fieldtapd builds one at start-up")
				}
				rows := []planRow{}
				for _, p := range d.Transmit.Plans(caller(ctx).Owner()) {
					if in.PlanID == "" || p.ID == in.PlanID {
						rows = append(rows, toPlanRow(&p))
					}
				}
				if in.PlanID != "" && len(rows) == 0 {
					return fail(d.Source(), codeBadPlan, fmt.Sprintf("no plan %q: never made, expired, or evicted", in.PlanID), "make it again with a dry run")
				}
				return list(d.Source(), rows, Page{Returned: len(rows), TotalMatched: len(rows)})
			}),
		},
	}
}

func j1939Addrs(dst, src, pri *int) (uint8, uint8, uint8, error) {
	get := func(p *int, def, hi int, name string) (uint8, error) {
		if p == nil {
			return uint8(def), nil
		}
		if *p < 0 || *p > hi {
			return 0, fmt.Errorf("%s %d: want 0..%d", name, *p, hi)
		}
		return uint8(*p), nil
	}
	d, err := get(dst, 0xFF, 255, "destination")
	if err != nil {
		return 0, 0, 0, err
	}
	s, err := get(src, transmit.DefaultToolAddress, 255, "source_address")
	if err != nil {
		return 0, 0, 0, err
	}
	p, err := get(pri, transmit.DefaultRequestPriority, 7, "priority")
	return d, s, p, err
}

func parseHexID(s string, def uint32) (uint32, error) {
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil || v > wire.CANEFFMask {
		return 0, fmt.Errorf("id %q is not a hex CAN id", s)
	}
	if len(s) > 3 {
		return uint32(v) | wire.CANEFF, nil
	}
	return uint32(v), nil
}

func parseFrames(in []canSendFrame) ([]transmit.Frame, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("no frames")
	}
	out := make([]transmit.Frame, len(in))
	for i, f := range in {
		id, err := parseHexID(f.ID, 0)
		if err != nil || f.ID == "" {
			return nil, fmt.Errorf("frame %d: id %q is not a hex CAN id", i+1, f.ID)
		}
		if f.Extended != nil {
			id &^= wire.CANEFF
			if *f.Extended {
				id |= wire.CANEFF
			}
		}
		data, err := hex.DecodeString(strings.ReplaceAll(f.Data, " ", ""))
		if err != nil {
			return nil, fmt.Errorf("frame %d: data %q is not hex", i+1, f.Data)
		}
		if f.DelayMS < 0 {
			return nil, fmt.Errorf("frame %d: negative delay", i+1)
		}
		out[i] = transmit.Frame{ID: id, Data: data, Delay: time.Duration(f.DelayMS * float64(time.Millisecond))}
	}
	return out, nil
}

// UDS service names accepted by uds_request.
var udsServices = map[string]byte{
	"session_control": isotp.SIDSessionControl,
	"read_did":        isotp.SIDReadDataByID,
	"read_dtc":        isotp.SIDReadDTC,
	"tester_present":  isotp.SIDTesterPresent,
}

// udsProgrammingSession is refused: it prepares an ECU for reflashing.
const udsProgrammingSession = 2

func udsSpec(in udsRequestIn) (transmit.Spec, error) {
	sid, known := udsServices[in.Service]
	if !known {
		return transmit.Spec{}, fmt.Errorf("service %q: want session_control, read_did, read_dtc or tester_present", in.Service)
	}
	var payload []byte
	switch sid {
	case isotp.SIDSessionControl:
		if in.Session < 1 || in.Session > 0x7F || in.Session == udsProgrammingSession {
			return transmit.Spec{}, fmt.Errorf("session %d: want 1 (default) or 3 (extended); programming (2) is not offered", in.Session)
		}
		payload = isotp.SessionControl(byte(in.Session))
	case isotp.SIDReadDataByID:
		did, err := strconv.ParseUint(in.DID, 16, 16)
		if err != nil || len(in.DID) != 4 {
			return transmit.Spec{}, fmt.Errorf("did %q: want 4 hex digits", in.DID)
		}
		payload = isotp.ReadDataByID(uint16(did))
	case isotp.SIDReadDTC:
		sub := in.DTCReport
		if sub == 0 {
			sub = isotp.DTCByMask
		}
		if sub != isotp.DTCCountByMask && sub != isotp.DTCByMask && sub != isotp.DTCSupported {
			return transmit.Spec{}, fmt.Errorf("dtc_report %d: want 1, 2 or 10", sub)
		}
		mask := 0xFF
		if in.StatusMask != nil {
			mask = *in.StatusMask
		}
		if mask < 0 || mask > 0xFF {
			return transmit.Spec{}, fmt.Errorf("status_mask %d: want 0..255", mask)
		}
		payload = isotp.ReadDTC(byte(sub), byte(mask))
	case isotp.SIDTesterPresent:
		payload = isotp.TesterPresent(false)
	}
	reqID, err := parseHexID(in.RequestID, transmit.DefaultUDSRequestID)
	if err != nil {
		return transmit.Spec{}, err
	}
	respID, err := parseHexID(in.ResponseID, transmit.DefaultUDSResponseID)
	if err != nil {
		return transmit.Spec{}, err
	}
	return transmit.UDSRequest{Port: in.Port, RequestID: reqID, ResponseID: respID, Payload: payload, Pad: !in.NoPadding}.Spec()
}

func replaySpec(d Deps, in replayIn) (transmit.Spec, error) {
	if d.CAN == nil {
		return transmit.Spec{}, fmt.Errorf("this box has no CAN store to replay from")
	}
	src := d.CAN.Lookup(in.SourcePort)
	if src == nil {
		return transmit.Spec{}, fmt.Errorf("no CAN port %q has stored frames (can_buses lists them)", in.SourcePort)
	}
	f, err := parseCANFilter(in.ID, in.Mask, in.Since, in.Until)
	if err != nil {
		return transmit.Spec{}, err
	}
	if in.MaxFrames < 0 || in.MaxFrames > transmit.MaxFrames {
		return transmit.Spec{}, fmt.Errorf("max_frames %d: want 1..%d", in.MaxFrames, transmit.MaxFrames)
	}
	w := transmit.Window{Since: f.since, Until: f.until, Max: in.MaxFrames}
	if f.haveID {
		w.ID, w.Mask = f.id&wire.CANEFFMask, f.mask&wire.CANEFFMask
	}
	target := in.Port
	if target == "" {
		target = in.SourcePort
	}
	return transmit.Replay(src, target, w)
}
