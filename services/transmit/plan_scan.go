package transmit

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
)

// Scan bounds and pace. A scan is one plan, so it holds at most MaxFrames
// requests; each waits for its answer (or scanAnswerWait, extended to P2*
// by a 0x78 pending answer) and then DefaultScanGap before the next, so a
// scan never adds more than one outstanding request to the bus.
const (
	DefaultScanGap = 20 * time.Millisecond
	MinScanGap     = 10 * time.Millisecond
	MaxScanGap     = time.Second
	// scanAnswerWait is ISO 14229-2's P2 server (50 ms) with margin for
	// a gateway in between: a silent ECU costs the scan this much.
	scanAnswerWait = 200 * time.Millisecond
	// maxScanAnswers bounds what one scan keeps; an ECU answering a
	// request many times is counted past it.
	maxScanAnswers = 2 * MaxFrames
)

// Scan sessions (DiagnosticSessionControl): default and extended only.
// The programming session can start an ECU's bootloader, and OEM
// sessions are undocumented: a scan refuses both.
var scanSessions = map[string]byte{"default": 0x01, "extended": 0x03}

// ScanSessionNames lists the sessions a scan may probe.
func ScanSessionNames() []string { return []string{"default", "extended"} }

// scanNeverSent names what a scan never sends, whatever it is asked.
var scanNeverSent = []string{
	"writes (0x2E WriteDataByIdentifier, 0x3D WriteMemoryByAddress)",
	"routine and I/O control (0x31, 0x2F)",
	"security access (0x27) and resets (0x11)",
	"fault clears (0x14)",
	"the programming session (0x10 02) and OEM sessions",
}

// ScanECU is one ECU's physical request and response ids.
type ScanECU struct {
	RequestID, ResponseID uint32 // with wire.CANEFF for 29-bit
}

// DIDRange is an inclusive range of data identifiers.
type DIDRange struct{ From, To uint16 }

// UDSScan reads DIDs on several ECUs, optionally in each session given,
// as one plan under one confirmation.
type UDSScan struct {
	Port     string
	ECUs     []ScanECU
	Sessions []string // empty: the ECUs' current session
	DIDs     []DIDRange
	Gap      time.Duration // after each answer (0: DefaultScanGap)
	Pad      bool
}

// Spec plans the scan: per ECU, per session, a session change when asked
// and then one ReadDataByIdentifier per DID, each a single frame that the
// run answers before the next; an ECU taken out of the default session is
// returned to it at its end.
func (r UDSScan) Spec() (Spec, error) {
	if len(r.ECUs) == 0 {
		return Spec{}, fmt.Errorf("no ECU: name at least one request/response id pair")
	}
	if len(r.DIDs) == 0 {
		return Spec{}, fmt.Errorf("no DID: name at least one DID or range")
	}
	gap := r.Gap
	if gap == 0 {
		gap = DefaultScanGap
	}
	if gap < MinScanGap || gap > MaxScanGap {
		return Spec{}, fmt.Errorf("gap %v outside %v..%v", gap, MinScanGap, MaxScanGap)
	}
	dids := 0
	for _, d := range r.DIDs {
		if d.From > d.To {
			return Spec{}, fmt.Errorf("DID range 0x%04X-0x%04X runs backwards", d.From, d.To)
		}
		dids += int(d.To-d.From) + 1
	}
	sessions := []byte{0} // 0: stay in the current session
	if len(r.Sessions) > 0 {
		sessions = sessions[:0]
		for _, name := range r.Sessions {
			sub, ok := scanSessions[name]
			if !ok {
				return Spec{}, fmt.Errorf("session %q: a scan probes only %v (the programming session can start a bootloader; OEM sessions are undocumented)", name, ScanSessionNames())
			}
			if !slices.Contains(sessions, sub) {
				sessions = append(sessions, sub)
			}
		}
	}
	leaves := sessions[0] != 0 && slices.ContainsFunc(sessions, func(s byte) bool { return s != 0x01 })
	perECU := len(sessions) * dids
	if sessions[0] != 0 {
		perECU += len(sessions)
	}
	if leaves && sessions[len(sessions)-1] != 0x01 {
		perECU++ // back to the default session
	}
	if n := perECU * len(r.ECUs); n > MaxFrames {
		return Spec{}, fmt.Errorf("the scan needs %d requests (%d ECU(s) × %d session(s) × %d DID(s), with the session changes); a plan holds at most %d: narrow the DID ranges or the ECUs",
			n, len(r.ECUs), len(sessions), dids, MaxFrames)
	}
	var frames []Frame
	var listens []*Expect
	add := func(e ScanECU, payload []byte) error {
		raw, err := isotp.Segment(payload, r.Pad)
		if err != nil {
			return err
		}
		d := gap
		if len(frames) == 0 {
			d = 0
		}
		frames = append(frames, Frame{ID: e.RequestID, Data: raw[0], Delay: d})
		listens = append(listens, &Expect{Kind: ExpectUDS, RequestID: e.RequestID, ResponseID: e.ResponseID, Request: payload,
			FlowControl: isotp.FlowControl(isotp.FlowContinue, 0, 0, r.Pad), Timeout: scanAnswerWait})
		return nil
	}
	for _, e := range r.ECUs {
		if e.RequestID == e.ResponseID {
			return Spec{}, fmt.Errorf("ECU %s: request and response ids are the same", wire.FormatCANID(e.RequestID))
		}
		for _, s := range sessions {
			if s != 0 {
				if err := add(e, []byte{isotp.SIDSessionControl, s}); err != nil {
					return Spec{}, err
				}
			}
			for _, rg := range r.DIDs {
				for did := uint32(rg.From); did <= uint32(rg.To); did++ {
					if err := add(e, []byte{isotp.SIDReadDataByID, byte(did >> 8), byte(did)}); err != nil {
						return Spec{}, err
					}
				}
			}
		}
		if leaves && sessions[len(sessions)-1] != 0x01 {
			if err := add(e, []byte{isotp.SIDSessionControl, 0x01}); err != nil {
				return Spec{}, err
			}
		}
	}
	names := make([]string, len(r.ECUs))
	for i, e := range r.ECUs {
		names[i] = wire.FormatCANID(e.RequestID) + "→" + wire.FormatCANID(e.ResponseID)
	}
	in := "the current session"
	if sessions[0] != 0 {
		in = "sessions " + strings.Join(r.Sessions, ", ")
	}
	sp := Spec{
		Port: r.Port, Medium: MediumCAN, Tool: "uds_scan",
		Summary: fmt.Sprintf("UDS scan: %d DID(s) on %d ECU(s) (%s) in %s, %d requests, each answered or given up after %v before the next",
			dids, len(r.ECUs), strings.Join(names, ", "), in, len(frames), scanAnswerWait),
		Frames: frames, Listens: listens, NotSent: scanNeverSent,
		Unknowns: []string{
			"which DIDs each ECU supports: an unsupported one is answered with NRC 0x31 (requestOutOfRange) or not at all",
			"how long the scan takes: each silent request costs " + scanAnswerWait.String() + ", each 0x78 pending answer up to 5 s",
		},
	}
	if leaves {
		sp.Preconditions = append(sp.Preconditions, "the extended session changes how an ECU behaves until it times out (about 5 s without TesterPresent) or the scan returns it to the default session")
	}
	return sp, nil
}

// ScanResult is one request of a scan and what came of it.
type ScanResult struct {
	Step       int    // frame number
	RequestID  string // hex CAN ids
	ResponseID string
	Service    string // "session" or "read_did"
	Session    int    // the session asked for (session) or in effect (read_did); 0: the ECU's current one
	DID        string // "0xF190" for read_did
	// Outcome is positive, negative or no_answer.
	Outcome string
	NRC     string
	NRCName string
	Data    string // the answer's data after the DID, hex
	Text    string // the data as printable ASCII when every byte is; the ECU's words: fence them
}

// Scan outcomes.
const (
	ScanPositive = "positive"
	ScanNegative = "negative"
	ScanSilent   = "no_answer"
)

// ScanTally lists a run scan's requests in order with their outcomes: its
// final answer (after any 0x78 pending), or no_answer. Nil for a plan that
// is not a scan.
func ScanTally(p *Plan, out *Outcome) []ScanResult {
	if p.listens == nil || out == nil {
		return nil
	}
	// A step was run when it was answered or given up; a scan stopped
	// early lists only those.
	final, run := map[int]Answer{}, map[int]bool{}
	for _, a := range out.Answers {
		if a.Step > 0 {
			run[a.Step] = true
			if a.UDS == nil || !a.UDS.Pending {
				final[a.Step] = a
			}
		}
	}
	for _, step := range out.Silent {
		run[step] = true
	}
	var rows []ScanResult
	session := map[uint32]int{}
	for i, e := range p.listens {
		if e == nil || !run[i+1] {
			continue
		}
		r := ScanResult{Step: i + 1, RequestID: wire.FormatCANID(e.RequestID), ResponseID: wire.FormatCANID(e.ResponseID), Outcome: ScanSilent}
		switch e.Request[0] {
		case isotp.SIDSessionControl:
			r.Service, r.Session = "session", int(e.Request[1])
		case isotp.SIDReadDataByID:
			r.Service, r.Session, r.DID = "read_did", session[e.RequestID], fmt.Sprintf("0x%02X%02X", e.Request[1], e.Request[2])
		}
		if a, ok := final[i+1]; ok && a.UDS != nil {
			r.Outcome = ScanNegative
			if a.UDS.Positive {
				r.Outcome = ScanPositive
				if r.Service == "session" {
					session[e.RequestID] = r.Session
				}
			}
			r.NRC, r.NRCName, r.Data, r.Text = a.UDS.NRC, a.UDS.NRCName, a.UDS.DataHex, a.Text
		}
		rows = append(rows, r)
	}
	return rows
}
