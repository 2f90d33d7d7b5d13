package j1939gen

import (
	"encoding/binary"
	"math/rand/v2"
	"time"
)

// Scenario timing and facts tests elsewhere can check decoders against.
const (
	// ConflictAt is when, into pass 0, the second device claims.
	ConflictAt = 20 * time.Second
	// WorkshopAt is when, into every pass, the service tool starts.
	WorkshopAt = 10 * time.Second
	// ReDetect is how long after the DM11 clear the engine reports its
	// (still present) fault again, with occurrence count 1.
	ReDetect = 5 * time.Second
	// ToolAddress is the service tool's source address (J1939 Appendix B:
	// off-board diagnostic-service tool #1).
	ToolAddress = 0xF9
	// IntruderAddress is where the conflicting device claims: the body
	// controller's address.
	IntruderAddress = BodyAddress
	// ECUSerial is what the engine answers for DID 0xF18C.
	ECUSerial = "FT0000042"
	// PreviousSPN and PreviousFMI are the engine's one previously active
	// DTC (DM2): oil pressure low, seen PreviousOccurrences times.
	PreviousSPN         = 100
	PreviousFMI         = 1
	PreviousOccurrences = 2
	// WorkshopRequests is how many UDS requests one session makes, of
	// which WorkshopNegative get a negative answer (NRC 0x31) and
	// WorkshopSuppressed ask for none (TesterPresent 0x3E 0x80).
	WorkshopRequests   = 9
	WorkshopNegative   = 1
	WorkshopSuppressed = 1
)

// Identifiers of the scenario (J1939-21; ISO 15765-2 normal fixed
// addressing is PGN 0xDA00, PDU1 with the target in PS).
const (
	pgnDiagPhysical = 0xDA00
	pgnRequest      = 0xEA00
	pgnAck          = 0xE800
	pgnDM2          = 65227
	pgnDM11         = 65235
	prioDiag        = 6
	toolFunction    = 129 // off-board diagnostic-service tool (J1939 Appendix B, industry group 0)
	intruderFunc    = 130 // a function above the body controller's 26: its NAME loses
	isotpPad        = 0xAA
	nullAddress     = 0xFE
	dm11Clears      = 0 // acknowledgement control byte: positive
)

// names draws one NAME identity per ECU, the tool and the intruder from
// Seed alone, so every pass of a run keeps them.
type names struct {
	ecu      [len(ecus)]uint32
	tool     uint32
	intruder uint32
}

// nameStream is the PCG stream of the NAME draws; another stream than the
// drive's, so the NAMEs never depend on Pass.
const nameStream = 0x4e414d45 // "NAME"

func drawNames(seed int64) names {
	r := rand.New(rand.NewPCG(uint64(seed), nameStream))
	var n names
	for i := range n.ecu {
		n.ecu[i] = r.Uint32()
	}
	n.tool, n.intruder = r.Uint32(), r.Uint32()
	return n
}

// script is a fixed list of frames at given times, in order.
type script struct {
	events []event
	i      int
}

type event struct {
	at   time.Duration
	id   uint32
	data []byte
}

func (s *script) due() time.Duration {
	if s.i >= len(s.events) {
		return never
	}
	return s.events[s.i].at
}
func (s *script) id() uint32 { return s.events[s.i].id }
func (s *script) take(time.Duration) []byte {
	e := s.events[s.i]
	s.i++
	return e.data
}

// conflict is the second device's claim, the body controller's answer and
// the device's Cannot Claim, a millisecond apart.
func conflict(n names) *script {
	claim := canID(prioInfo, pgnAddressClaim, IntruderAddress, globalAddress)
	loser := name(n.intruder, intruderFunc)
	return &script{events: []event{
		{at: ConflictAt, id: claim, data: loser},
		{at: ConflictAt + time.Millisecond, id: claim, data: name(n.ecu[bodyIndex], ecus[bodyIndex].function)},
		{at: ConflictAt + 2*time.Millisecond, id: canID(prioInfo, pgnAddressClaim, nullAddress, globalAddress), data: loser},
	}}
}

// bodyIndex is the body controller's row of ecus.
const bodyIndex = 3

// workshop is the service tool's session, starting at WorkshopAt: the
// requests, the engine's answers (multi-frame ones after the tool's flow
// control), the DM2 read and the DM11 clear with its acknowledgement.
// clearAt is when the DM11 request goes out.
func workshop(n names, claim bool) (s *script, clearAt time.Duration) {
	toEngine := canID(prioDiag, pgnDiagPhysical, ToolAddress, EngineAddress)
	toTool := canID(prioDiag, pgnDiagPhysical, EngineAddress, ToolAddress)
	at := WorkshopAt
	var ev []event
	add := func(after time.Duration, id uint32, data []byte) {
		at += after
		ev = append(ev, event{at: at, id: id, data: data})
	}
	if claim {
		add(0, canID(prioInfo, pgnAddressClaim, ToolAddress, globalAddress), name(n.tool, toolFunction))
		at += claimSettle
	}
	// One exchange: the request, then the answer after delay; a long
	// answer goes as a first frame, the tool's flow control (no block
	// limit, no separation time) and consecutive frames 1 ms apart.
	ask := func(after time.Duration, req []byte, delay time.Duration, answers ...[]byte) {
		add(after, toEngine, single(req))
		for i, a := range answers {
			if i > 0 {
				delay = 800 * time.Millisecond // a final answer after "response pending"
			}
			frames := segment(a)
			add(delay, toTool, frames[0])
			if len(frames) > 1 {
				add(2*time.Millisecond, toEngine, []byte{0x30, 0x00, 0x00, isotpPad, isotpPad, isotpPad, isotpPad, isotpPad})
				for _, f := range frames[1:] {
					add(time.Millisecond, toTool, f)
				}
			}
		}
	}
	ms := time.Millisecond
	ask(50*ms, []byte{0x10, 0x03}, 4*ms, []byte{0x50, 0x03, 0x00, 0x32, 0x01, 0xF4})
	ask(100*ms, []byte{0x22, 0xF1, 0x90}, 6*ms, append([]byte{0x62, 0xF1, 0x90}, VIN...))
	ask(200*ms, []byte{0x22, 0xF1, 0x8C}, 5*ms, []byte{0x7F, 0x22, 0x78}, append([]byte{0x62, 0xF1, 0x8C}, ECUSerial...))
	// reportDTCByStatusMask (confirmed): P0217 engine over-temperature,
	// confirmed and failing; P0118 coolant sensor high, confirmed earlier.
	ask(100*ms, []byte{0x19, 0x02, 0x08}, 8*ms, []byte{0x59, 0x02, 0xFF, 0x02, 0x17, 0x00, 0x2F, 0x01, 0x18, 0x00, 0x28})
	ask(150*ms, []byte{0x22, 0x01, 0x23}, 3*ms, []byte{0x7F, 0x22, 0x31})
	add(300*ms, toEngine, single([]byte{0x3E, 0x80})) // tester present, no answer wanted
	ask(200*ms, []byte{0x22, 0xF1, 0x86}, 3*ms, []byte{0x62, 0xF1, 0x86, 0x03})
	ask(100*ms, []byte{0x11, 0x03}, 20*ms, []byte{0x51, 0x03})
	ask(500*ms, []byte{0x10, 0x01}, 4*ms, []byte{0x50, 0x01, 0x00, 0x32, 0x01, 0xF4})
	// J1939-73: read the previously active DTCs, then clear the active ones.
	add(300*ms, canID(prioInfo, pgnRequest, ToolAddress, EngineAddress), le24(pgnDM2))
	add(15*ms, canID(prioInfo, pgnDM2, EngineAddress, globalAddress), dm2())
	add(300*ms, canID(prioInfo, pgnRequest, ToolAddress, EngineAddress), le24(pgnDM11))
	clearAt = at
	add(20*ms, canID(prioInfo, pgnAck, EngineAddress, globalAddress),
		append([]byte{dm11Clears, na, na, na, ToolAddress}, le24(pgnDM11)...))
	return &script{events: ev}, clearAt
}

// single is a single frame of payload, padded to 8 bytes.
func single(p []byte) []byte {
	f := append([]byte{byte(len(p))}, p...)
	for len(f) < dataLen {
		f = append(f, isotpPad)
	}
	return f
}

// segment frames an answer: one single frame, or a first frame and its
// consecutive frames (ISO 15765-2 §9.6), padded.
func segment(p []byte) [][]byte {
	if len(p) < dataLen {
		return [][]byte{single(p)}
	}
	out := [][]byte{append([]byte{0x10 | byte(len(p)>>8), byte(len(p))}, p[:6]...)}
	for sn, off := 1, 6; off < len(p); sn, off = sn+1, off+7 {
		f := append([]byte{0x20 | byte(sn&0x0F)}, p[off:min(off+7, len(p))]...)
		for len(f) < dataLen {
			f = append(f, isotpPad)
		}
		out = append(out, f)
	}
	return out
}

func le24(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16)} }

// dm2 carries the one previously active DTC, lamps off.
func dm2() []byte {
	b := fill(dataLen)
	b[0], b[1] = 0, na
	binary.LittleEndian.PutUint16(b[2:], PreviousSPN&0xFFFF)
	b[4] = byte(PreviousSPN>>16&0x07)<<5 | PreviousFMI&0x1F
	b[5] = PreviousOccurrences & 0x7F
	return b
}
