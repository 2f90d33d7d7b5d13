package transmit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
)

// Risk is what a plan can do to a vehicle.
type Risk string

// Risk classes, in increasing order.
const (
	RiskRead    Risk = "read"    // asks for data; ECUs answer, nothing changes
	RiskActuate Risk = "actuate" // may change behaviour (arbitrary frames, sessions)
	RiskErase   Risk = "erase"   // clears stored information (DM3, DM11, UDS 0x14)
)

func (r Risk) rank() int {
	switch r {
	case RiskRead:
		return 0
	case RiskActuate:
		return 1
	}
	return 2 // unknown counts as the worst
}

// Medium is the kind of bus a plan is for.
type Medium string

// Media with a transmit path.
const (
	MediumCAN   Medium = "can"
	MediumJ1708 Medium = "j1708"
)

// IDJ1708 marks a J1708 message, which has no id: it borrows the
// error-frame flag, which no transmitted CAN data frame carries.
const IDJ1708 = wire.CANERR

// Bounds.
const (
	// MaxFrames bounds one plan: a person must be able to read it, and a
	// replayed window is for a short sequence, not a capture.
	MaxFrames = 256
	// MaxDelay bounds the wait before one frame.
	MaxDelay = 10 * time.Second
	// MaxCANData is a classic CAN data field; MaxJ1708 the SAE J1708
	// message limit including MID and checksum.
	MaxCANData = 8
	MaxJ1708   = 21
	// j1708Bitrate and j1708BitsPerByte give J1708 load (9600 baud, 8N1).
	j1708Bitrate     = 9600
	j1708BitsPerByte = 10
	// loadWindow is the span added load is averaged over: one second, as
	// bus_load measures.
	loadWindow = time.Second
)

// Frame is one frame the plan sends.
type Frame struct {
	// ID carries wire.CANEFF for a 29-bit CAN id; it is IDJ1708 for J1708.
	ID   uint32 `json:"-"`
	Data []byte `json:"-"`
	// Delay is the gap: the wait after the previous frame (or the start)
	// before this one.
	Delay time.Duration `json:"-"`
	// Offset is when the frame is due, counted from the plan's start: the
	// sum of the gaps up to it. Plan sets it; it is not part of the hash.
	Offset time.Duration `json:"-"`
	// OnFlowControl marks an ISO-TP consecutive frame: it is sent only
	// after the ECU's flow control allows it, never blindly.
	OnFlowControl bool `json:"-"`
}

// frameJSON is how a frame reads to a person and to a client.
type frameJSON struct {
	ID            string `json:"id"`
	Extended      bool   `json:"extended"`
	DLC           int    `json:"dlc"`
	Data          string `json:"data"`
	DelayMicros   int64  `json:"delay_us"`
	OffsetMicros  int64  `json:"offset_us"`
	OnFlowControl bool   `json:"on_flow_control,omitempty"`
}

// MarshalJSON writes the frame as hex, ids as on a candump line.
func (f Frame) MarshalJSON() ([]byte, error) {
	return json.Marshal(frameJSON{ID: f.IDHex(), Extended: f.ID&wire.CANEFF != 0, DLC: len(f.Data),
		Data: strings.ToUpper(hex.EncodeToString(f.Data)), DelayMicros: f.Delay.Microseconds(), OffsetMicros: f.Offset.Microseconds(),
		OnFlowControl: f.OnFlowControl})
}

// UnmarshalJSON reads what MarshalJSON wrote (plan files for the CLI).
func (f *Frame) UnmarshalJSON(b []byte) error {
	var j frameJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	id := uint32(IDJ1708)
	if j.ID != "" {
		v, err := strconv.ParseUint(j.ID, 16, 32)
		if err != nil {
			return fmt.Errorf("frame id %q: %w", j.ID, err)
		}
		id = uint32(v)
	}
	if j.Extended {
		id |= wire.CANEFF
	}
	data, err := hex.DecodeString(j.Data)
	if err != nil {
		return fmt.Errorf("frame data %q: %w", j.Data, err)
	}
	if j.DLC != len(data) {
		return fmt.Errorf("frame %s: dlc %d but %d data bytes", j.ID, j.DLC, len(data))
	}
	// offset_us is derived from the gaps; Plan recomputes it.
	*f = Frame{ID: id, Data: data, Delay: time.Duration(j.DelayMicros) * time.Microsecond, OnFlowControl: j.OnFlowControl}
	return nil
}

// IDHex is the id as hex: 8 digits for 29-bit, 3 for 11-bit, "" for J1708.
func (f Frame) IDHex() string {
	switch {
	case f.ID == IDJ1708:
		return ""
	}
	return wire.FormatCANID(f.ID)
}

// Expect is the answer a plan listens for after its frames.
type Expect struct {
	Kind string // "j1939" or "uds"
	// J1939: the PGN and, unless 0xFF, the address it must come from.
	PGN  uint32
	From uint8
	// UDS: request and answer ids, the request payload for decoding, and
	// the flow-control frame this box sends after a First Frame.
	RequestID   uint32
	ResponseID  uint32
	Request     []byte
	FlowControl []byte
	// Timeout is how long the plan listens after its last frame.
	Timeout time.Duration
}

// Spec is what a planner produces: everything but the id and times.
type Spec struct {
	Port    string
	Medium  Medium
	Tool    string // the planner that made it
	Summary string // one line a person reads first
	Frames  []Frame
	// Preconditions a person should check; Unknowns what the plan cannot know.
	Preconditions []string
	Unknowns      []string
	Expect        *Expect
	// Listens, when set, holds one expectation per frame (nil: none): the
	// run waits for each frame's answer before the next (a scan).
	Listens []*Expect
	// NotSent names what the planner refuses to send whatever it is
	// asked (a scan's excluded services).
	NotSent []string
}

// Plan is a stored, immutable Spec a person can read and a caller can run.
type Plan struct {
	ID            string      `json:"plan_id"`
	Port          string      `json:"port"`
	Medium        Medium      `json:"medium"`
	Tool          string      `json:"tool"`
	Summary       string      `json:"summary"`
	Frames        []Frame     `json:"frames"`
	Count         int         `json:"count"`
	DurationMicro int64       `json:"duration_us"`
	AddedLoad     *float64    `json:"estimated_added_bus_load"`
	LoadBasis     string      `json:"estimated_added_bus_load_basis"`
	Risk          Risk        `json:"risk"`
	Bus           BusCheck    `json:"bus_check"`
	Preconditions []string    `json:"preconditions"`
	Unknowns      []string    `json:"cannot_know"`
	NotSent       []string    `json:"never_sent,omitempty"`
	Listen        *listenJSON `json:"listens_for,omitempty"`
	Hash          string      `json:"sha256"`
	Created       time.Time   `json:"created"`
	Expires       time.Time   `json:"expires"`
	Executed      bool        `json:"executed"`
	// Ended says why the plan will never run although it did not expire:
	// declined, cancelled, no_answer or voided (Ended… constants).
	Ended string `json:"ended,omitempty"`
	// ButtonCode is the blink pattern the status LED shows while this
	// plan waits for the confirm button ("2-4-1"); set when the box
	// requires the button.
	ButtonCode string `json:"button_code,omitempty"`
	owner      Owner
	expect     *Expect
	listens    []*Expect
	duration   time.Duration
}

type listenJSON struct {
	Kind        string `json:"kind"`
	PGN         uint32 `json:"pgn,omitempty"`
	From        string `json:"from,omitempty"`
	ResponseID  string `json:"response_id,omitempty"`
	FlowControl string `json:"flow_control_sent_after_first_frame,omitempty"`
	TimeoutMS   int64  `json:"timeout_ms"`
}

// check validates a spec against the bounds; the error says what is wrong.
func (s *Spec) check() error {
	switch {
	case s.Port == "":
		return fmt.Errorf("no port")
	case len(s.Frames) == 0:
		return fmt.Errorf("no frames")
	case len(s.Frames) > MaxFrames:
		return fmt.Errorf("%d frames: a plan holds at most %d", len(s.Frames), MaxFrames)
	case s.Listens != nil && len(s.Listens) != len(s.Frames):
		return fmt.Errorf("%d expectations for %d frames", len(s.Listens), len(s.Frames))
	}
	for i, f := range s.Frames {
		if f.Delay < 0 || f.Delay > MaxDelay {
			return fmt.Errorf("frame %d: delay %v outside 0..%v", i+1, f.Delay, MaxDelay)
		}
		switch s.Medium {
		case MediumCAN:
			if len(f.Data) > MaxCANData {
				return fmt.Errorf("frame %d: %d data bytes, classic CAN carries at most %d", i+1, len(f.Data), MaxCANData)
			}
			if f.ID&^(wire.CANEFF|wire.CANEFFMask) != 0 {
				return fmt.Errorf("frame %d: id %X carries flag bits other than extended", i+1, f.ID)
			}
			if f.ID&wire.CANEFF == 0 && f.ID > wire.CANSFFMask || f.ID&^wire.CANEFF > wire.CANEFFMask {
				return fmt.Errorf("frame %d: id %X is out of range", i+1, f.ID&^wire.CANEFF)
			}
		case MediumJ1708:
			if f.ID != IDJ1708 {
				return fmt.Errorf("frame %d: a J1708 message carries no CAN id", i+1)
			}
			if len(f.Data) < 2 || len(f.Data) > MaxJ1708 {
				return fmt.Errorf("frame %d: %d bytes, a J1708 message is 2..%d", i+1, len(f.Data), MaxJ1708)
			}
		default:
			return fmt.Errorf("medium %q has no transmit path", s.Medium)
		}
	}
	return nil
}

// addedLoad estimates the load the plan adds on a bus of bitrate, averaged
// over max(duration, one second).
func addedLoad(s *Spec, bitrate int, d time.Duration) (*float64, string) {
	if bitrate <= 0 {
		return nil, "the port's bitrate is unknown"
	}
	bits := 0
	for _, f := range s.Frames {
		if s.Medium == MediumJ1708 {
			bits += j1708BitsPerByte * len(f.Data)
		} else {
			bits += canbus.FrameBits(f.ID&wire.CANEFF != 0, len(f.Data))
		}
	}
	w := max(d, loadWindow)
	v := float64(bits) / (float64(bitrate) * w.Seconds())
	return &v, fmt.Sprintf("%d bits (worst-case stuffing) over %v at %d bit/s", bits, w, bitrate)
}

// hashFrames fingerprints what goes on the wire, so a printed plan and an
// executed one can be compared by a person or a test.
func hashFrames(port string, frames []Frame) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", port)
	for _, f := range frames {
		fmt.Fprintf(h, "%08X %X %d %v\n", f.ID, f.Data, f.Delay.Microseconds(), f.OnFlowControl)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ListensFor is the answer the plan listens for after its frames, or nil
// when it listens for none. The Expect is shared: do not change it.
func (p *Plan) ListensFor() *Expect { return p.expect }

// Text renders the plan for a person: every frame byte for byte.
func (p *Plan) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan %s on port %s (%s): %s\n", p.ID, p.Port, p.Medium, p.Summary)
	fmt.Fprintf(&b, "risk: %s; %d frame(s) over %s\n", p.Risk, p.Count, millis(time.Duration(p.DurationMicro)*time.Microsecond))
	b.WriteString("  (+ offset from the plan's start, Δ gap after the previous frame)\n")
	for i, f := range p.Frames {
		cond := ""
		if f.OnFlowControl {
			cond = " (only after the ECU's flow control)"
		}
		id := f.IDHex()
		if id == "" {
			id = "J1708"
		}
		fmt.Fprintf(&b, "  %2d. %s %s %s [%d] % X%s\n", i+1, Offset(f.Offset), Gap(f.Delay), id, len(f.Data), f.Data, cond)
	}
	if p.Listen != nil && p.Listen.FlowControl != "" {
		fmt.Fprintf(&b, "  reactive: after a First Frame on %s, send flow control %s\n", p.Listen.ResponseID, p.Listen.FlowControl)
	}
	p.Bus.text(&b)
	for _, s := range p.Preconditions {
		fmt.Fprintf(&b, "  check: %s\n", s)
	}
	for _, s := range p.Unknowns {
		fmt.Fprintf(&b, "  cannot know: %s\n", s)
	}
	for _, s := range p.NotSent {
		fmt.Fprintf(&b, "  never sent by this plan: %s\n", s)
	}
	if p.listens != nil {
		b.WriteString("  each request waits for its answer (or its timeout) before the next\n")
	}
	if p.ButtonCode != "" {
		fmt.Fprintf(&b, "  confirm button: the status LED blinks %s while this plan waits for the press\n", p.ButtonCode)
	}
	fmt.Fprintf(&b, "sha256 %s\n", p.Hash)
	return b.String()
}

// Offset spells when a frame is due, from the plan's start: "+12.000ms".
func Offset(d time.Duration) string { return "+" + millis(d) }

// Gap spells the wait after the previous frame: "Δ99.948ms". Offsets and
// gaps have distinct notations so a person never reads one as the other.
func Gap(d time.Duration) string { return "Δ" + millis(d) }

// millis is d in milliseconds to the microsecond, the resolution of a plan.
func millis(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1e3, 'f', 3, 64) + "ms"
}
