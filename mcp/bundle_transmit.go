package mcp

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
	"fieldtap/services/transmit"
)

// transmitTools is the transmit bundle. Every tool that can put a byte on
// a bus defaults to dry_run: true and goes through the one gatekeeper,
// services/transmit, which checks every gate itself (bundle_transmit_flow.go).
var transmitTools = []toolDef{j1939Request, j1939RequestDM, udsRequest, udsScan, canSend, replayFrames, j1708Send, transmitExecute, transmitStatus, transmitPlans}

// dryNote ends the description of every tool that can transmit.
const dryNote = " Defaults to dry_run: true, which returns the plan (every frame byte for byte, risk, load, what it cannot know) and sends nothing; " +
	"sending needs ack_active: true and passes every transmit gate (docs/transmit-safety.md)."

type j1939RequestIn struct {
	Port     txPort       `json:"port"`
	PGN      pgnArg       `json:"pgn" jsonschema:"the PGN asked for, decimal (65260 is the VIN)"`
	DA       *requestDA   `json:"da,omitempty" jsonschema:"the address asked, 0 to 255; default 255, every ECU, whose multi-packet answers come by BAM"`
	SA       *toolSA      `json:"sa,omitempty" jsonschema:"this box's source address; default 249 (0xF9, off-board diagnostic tool); 254 and 255 are refused"`
	Priority *priorityArg `json:"priority,omitempty"`
	txGate
}

var j1939Request = tool[j1939RequestIn, txOut]{
	name:  "j1939_request",
	reads: readsNothing,
	desc:  "Plan or send one J1939 Request (PGN 59904) for a PGN on a CAN port (port is required) and collect the answers (direct, by BAM, or a NACK)." + dryNote,
	hints: transmits(false),
	text:  []textSource{textJ1939},
	run: func(c *call, in j1939RequestIn) (txOut, error) {
		return planAndMaybeRun(c, in.txGate, func() (transmit.Spec, error) {
			return transmit.J1939Request{Port: string(in.Port), PGN: uint32(in.PGN), Destination: in.DA.value(), Source: in.SA.value(), Priority: in.Priority.value()}.Spec()
		})
	},
}

type j1939RequestDMIn struct {
	Port txPort     `json:"port"`
	DM   dmArg      `json:"dm"`
	DA   *requestDA `json:"da,omitempty" jsonschema:"the address asked, 0 to 255; default 255, every ECU"`
	SA   *toolSA    `json:"sa,omitempty" jsonschema:"this box's source address; default 249 (0xF9)"`
	txGate
}

var j1939RequestDM = tool[j1939RequestDMIn, txOut]{
	name:  "j1939_request_dm",
	reads: readsNothing,
	desc:  "Plan or send a J1939 diagnostic-message request on a CAN port: DM1/DM2 read faults; DM3/DM11 CLEAR them (erase-class: refused unless a person confirms through elicitation)." + dryNote,
	hints: transmits(true),
	text:  []textSource{textJ1939},
	run: func(c *call, in j1939RequestDMIn) (txOut, error) {
		return planAndMaybeRun(c, in.txGate, func() (transmit.Spec, error) {
			return transmit.J1939RequestDM(string(in.Port), string(in.DM), in.DA.value(), in.SA.value(), transmit.DefaultRequestPriority)
		})
	},
}

type udsRequestIn struct {
	Port       txPort         `json:"port"`
	Service    udsServiceArg  `json:"service"`
	Session    *udsSessionArg `json:"session,omitempty"`
	DID        didArg         `json:"did,omitempty"`
	DTCReport  *dtcReportArg  `json:"dtc_report,omitempty"`
	StatusMask *statusMaskArg `json:"status_mask,omitempty"`
	RequestID  *udsRequestID  `json:"request_id,omitempty" jsonschema:"hex CAN id the request goes on (more than 3 digits is 29-bit); default 7E0"`
	ResponseID *udsResponseID `json:"response_id,omitempty" jsonschema:"hex CAN id the answer comes on; default 7E8"`
	NoPadding  bool           `json:"no_padding,omitempty" jsonschema:"send short frames instead of padding to 8 bytes with AA"`
	txGate
}

// payload is the UDS request: the service and the arguments it needs.
func (in udsRequestIn) payload() ([]byte, error) {
	switch sid := in.Service.sid(); sid {
	case isotp.SIDSessionControl:
		if in.Session == nil {
			return nil, argErr("session", "give session 1 (default) or 3 (extended)", "is required with service session_control")
		}
		return isotp.SessionControl(byte(*in.Session)), nil
	case isotp.SIDReadDataByID:
		if in.DID == "" {
			return nil, argErr("did", "give the data identifier in hex, e.g. 0xF190 for the VIN", "is required with service read_did")
		}
		return isotp.ReadDataByID(uint16(udsHex(string(in.DID)))), nil
	case isotp.SIDReadDTC:
		sub, mask := isotp.DTCByMask, dtcStatusAll
		if in.DTCReport != nil {
			sub = int(*in.DTCReport)
		}
		if in.StatusMask != nil {
			mask = int(*in.StatusMask)
		}
		return isotp.ReadDTC(byte(sub), byte(mask)), nil
	default:
		return isotp.TesterPresent(false), nil
	}
}

func (in udsRequestIn) spec() (transmit.Spec, error) {
	payload, err := in.payload()
	if err != nil {
		return transmit.Spec{}, err
	}
	reqID, respID := uint32(transmit.DefaultUDSRequestID), uint32(transmit.DefaultUDSResponseID)
	if in.RequestID != nil {
		if reqID, err = canIDValue("request_id", string(*in.RequestID)); err != nil {
			return transmit.Spec{}, err
		}
	}
	if in.ResponseID != nil {
		if respID, err = canIDValue("response_id", string(*in.ResponseID)); err != nil {
			return transmit.Spec{}, err
		}
	}
	return transmit.UDSRequest{Port: string(in.Port), RequestID: reqID, ResponseID: respID, Payload: payload, Pad: !in.NoPadding}.Spec()
}

var udsRequest = tool[udsRequestIn, txOut]{
	name:  "uds_request",
	reads: readsNothing,
	desc: "Plan or send one UDS request over ISO-TP on a CAN port (0x10 session control, 0x22 read DID, 0x19 read DTCs, 0x3E tester present); " +
		"a multi-frame answer gets the flow control shown in the plan and is decoded, negative responses are named." + dryNote,
	hints: transmits(false),
	text:  []textSource{textUDS},
	run: func(c *call, in udsRequestIn) (txOut, error) {
		return planAndMaybeRun(c, in.txGate, in.spec)
	},
}

type canSendIn struct {
	Port   txPort        `json:"port"`
	Frames canSendFrames `json:"frames"`
	txGate
}

var canSend = tool[canSendIn, txOut]{
	name:  "can_send",
	reads: readsNothing,
	desc:  "Plan or send raw CAN frames given byte for byte (actuate-class at least; a recognised clear command is erase-class)." + dryNote,
	hints: transmits(true),
	run: func(c *call, in canSendIn) (txOut, error) {
		return planAndMaybeRun(c, in.txGate, func() (transmit.Spec, error) {
			frames, err := in.Frames.frames()
			return transmit.CANSend(string(in.Port), frames), err
		})
	},
}

type replayIn struct {
	Port       txPort  `json:"port" jsonschema:"the CAN port to send on, as transmit_status lists it"`
	SourcePort portArg `json:"source_port,omitempty" jsonschema:"the CAN port whose stored frames are replayed; default port"`
	canSelect
	MaxFrames *maxFramesArg `json:"max_frames,omitempty"`
	txGate
}

func (in replayIn) spec(c *call) (transmit.Spec, error) {
	from := in.SourcePort
	if from == "" {
		from = portArg(in.Port)
	}
	ps, err := canPorts(c.d, PortSelector{Port: from})
	if err != nil {
		return transmit.Spec{}, err
	}
	m, err := in.match()
	if err != nil {
		return transmit.Spec{}, err
	}
	w := transmit.Window{Since: m.in.since, Until: m.in.until, Max: transmit.MaxFrames}
	if in.MaxFrames != nil {
		w.Max = int(*in.MaxFrames)
	}
	if m.haveID {
		w.ID, w.Mask = m.id&wire.CANEFFMask, m.mask&wire.CANEFFMask
	}
	return transmit.Replay(ps[0], string(in.Port), w)
}

var replayFrames = tool[replayIn, txOut]{
	name:  "replay_frames",
	reads: readsNothing,
	desc: fmt.Sprintf("Plan or send a replay of a captured window of one CAN port (stored frames selected by id/mask and since/until) on port, with the captured gaps; "+
		"at most max_frames (default and maximum %d): a larger window is refused, never cut.", transmit.MaxFrames) + dryNote,
	hints: transmits(true),
	run: func(c *call, in replayIn) (txOut, error) {
		return planAndMaybeRun(c, in.txGate, func() (transmit.Spec, error) { return in.spec(c) })
	},
}

type j1708SendIn struct {
	Port txPort       `json:"port"`
	MID  midArg       `json:"mid" jsonschema:"this box's message identifier, 0 to 255"`
	Data j1708DataArg `json:"data"`
	txGate
}

var j1708Send = tool[j1708SendIn, txOut]{
	name:  "j1708_send",
	reads: readsNothing,
	desc:  "Plan or send one J1708 message on a J1708 port: MID and data, the checksum added; the driver waits for bus access at priority 8 and resends after a collision, at most 3 times." + dryNote,
	hints: transmits(true),
	run: func(c *call, in j1708SendIn) (txOut, error) {
		return planAndMaybeRun(c, in.txGate, func() (transmit.Spec, error) {
			return transmit.J1708Send(string(in.Port), byte(in.MID), hexBytes(string(in.Data)))
		})
	},
}

type transmitExecuteIn struct {
	PlanID    string `json:"plan_id" jsonschema:"a plan_id from a dry run"`
	AckActive bool   `json:"ack_active,omitempty" jsonschema:"must be true"`
	Override  string `json:"override_conflict,omitempty" jsonschema:"why to send although the plan's bus_check found another node on its id or source address; audited"`
	// Port, when given, is the bus the caller means: a plan for another
	// port is refused before any gate runs.
	PortSelector
}

var transmitExecute = tool[transmitExecuteIn, txOut]{
	name:  "transmit_execute",
	reads: readsNothing,
	desc: "Run exactly the stored plan a person read (from any dry run), once, through every transmit gate; asks a person through elicitation where the client supports it. " +
		"With port, a plan for another port is refused.",
	hints: transmits(true),
	text:  []textSource{textJ1939, textUDS},
	run: func(c *call, in transmitExecuteIn) (txOut, error) {
		svc := c.d.Transmit
		owner := caller(c.ctx).Owner()
		if in.Port != "" {
			if _, err := transmitPorts(svc.Status(owner), in.PortSelector); err != nil {
				return txOut{}, err
			}
			if p := svc.Get(owner, in.PlanID); p != nil && p.Port != string(in.Port) {
				return txOut{}, argErr("port", "omit port, or make the plan for that port", "plan %s is for port %s, not %s", p.ID, p.Port, in.Port)
			}
		}
		// On a retry the state names the plan too; the service refuses
		// one that names another (a moved confirmation).
		return execute(c, in.PlanID, in.AckActive, in.Override, c.req.Params.RequestState)
	},
}

// transmitPorts resolves the port argument against the transmitter's ports.
func transmitPorts(st transmit.Status, sel PortSelector) ([]string, error) {
	names := make([]string, len(st.Ports))
	for i, p := range st.Ports {
		names[i] = p.Port
	}
	return choosePorts(sel, "transmit", names, func(n string) string { return n })
}

type transmitStatusIn struct {
	PortSelector
}

var transmitStatus = tool[transmitStatusIn, transmitStatusOut]{
	name:  "transmit_status",
	reads: readsNothing,
	desc: "The transmitter: per port (or one) whether transmit is enabled, has a writer, is armed, its mode and rate limit, measured load; " +
		"the load ceiling, the plan store, and the recent transmissions and refusals with their gate.",
	hints: readOnly(),
	run: func(c *call, in transmitStatusIn) (transmitStatusOut, error) {
		svc := c.d.Transmit
		st := svc.Status(caller(c.ctx).Owner())
		chosen, err := transmitPorts(st, in.PortSelector)
		if err != nil {
			return transmitStatusOut{}, err
		}
		if in.Port != "" {
			st.Ports = slices.DeleteFunc(st.Ports, func(p transmit.PortStatus) bool { return !slices.Contains(chosen, p.Port) })
			st.Recent = slices.DeleteFunc(st.Recent, func(r transmit.Recent) bool { return !slices.Contains(chosen, r.Port) })
		}
		return transmitStatusOutOf(st), nil
	},
}

type transmitPlansIn struct {
	PlanID string `json:"plan_id,omitempty" jsonschema:"only this plan; omit for every live plan"`
	PortSelector
	Paging
	Projection
}

// planKey orders plans newest first, ties by id, from fields a plan never
// changes, so a plan keeps its place between pages.
func planKey(p *transmit.Plan) rowKey {
	h := fnv.New64a()
	h.Write([]byte(p.ID))
	return rowKey{math.MaxUint64 - uint64(p.Created.UnixNano()), h.Sum64()}
}

var transmitPlans = tool[transmitPlansIn, page[planRow]]{
	name:  "transmit_plans",
	reads: readsNothing,
	desc:  "Stored plans, newest first (they expire; a run plan is marked executed), of every transmit port or one, or one plan by plan_id. Paged.",
	hints: readOnly(),
	ids:   []string{"plan_id"},
	run: func(c *call, in transmitPlansIn) (page[planRow], error) {
		svc := c.d.Transmit
		owner := caller(c.ctx).Owner()
		chosen, err := transmitPorts(svc.Status(owner), in.PortSelector)
		if err != nil {
			return page[planRow]{}, err
		}
		pg, err := newPager(c, in.Paging)
		if err != nil {
			return page[planRow]{}, err
		}
		plans := svc.Plans(owner)
		slices.SortFunc(plans, func(a, b transmit.Plan) int {
			ka, kb := planKey(&a), planKey(&b)
			switch {
			case ka.less(kb):
				return -1
			case kb.less(ka):
				return 1
			}
			return 0
		})
		rows := []planRow{}
		found := false
		for i := range plans {
			p := &plans[i]
			if in.PlanID != "" && p.ID != in.PlanID || !slices.Contains(chosen, p.Port) {
				continue
			}
			found = true
			if pg.offer(planKey(p)) {
				rows = append(rows, planRowOf(p))
			}
		}
		if in.PlanID != "" && !found {
			return page[planRow]{}, notFound("make it again with a dry run; plans expire", "no plan %q on the chosen ports: never made, expired, or evicted", in.PlanID)
		}
		return page[planRow]{Items: rows, Page: pg.page()}, nil
	},
}
