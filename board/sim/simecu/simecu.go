// Package simecu is the simulated truck's diagnostic side: the engine
// ECU of board/sim/j1939gen answering what a tester writes on the sim
// board's CAN port. It answers a J1939 Request (PGN 0xEA00) for the VIN by
// BAM to global, as a real ECU does, and for DM1 and DM2 with the faults
// the generated engine broadcasts; and UDS on 0x7E0/0x7E8 over ISO-TP:
// ReadDataByIdentifier, DiagnosticSessionControl, ReadDTCInformation and
// TesterPresent, a long answer sent as a first frame and, after the
// tester's flow control, its consecutive frames.
//
// It is deterministic and has no goroutines: Handle returns the answer
// frames with the delay before each, and the sim port puts them on its
// bus when they fall due.
package simecu

import (
	"bytes"
	"sync"
	"time"

	"fieldtap/board/sim/j1939gen"
	"fieldtap/drivers/wire"
)

// Addressing of the engine ECU. It keeps the tool addresses free: J1939
// source address 0xF9 is the sim truck's workshop tool, and the UDS
// tester id 0x7E0 is nobody's but the box's.
const (
	Address    = j1939gen.EngineAddress
	RequestID  = 0x7E0 // UDS physical request (ISO 15765-4, 11-bit)
	ResponseID = 0x7E8
)

// What the ECU answers by UDS ReadDataByIdentifier (ISO 14229-1 DIDs).
const (
	DIDVIN             = 0xF190
	DIDSerial          = 0xF18C
	DIDActiveSession   = 0xF186
	DIDSoftwareVersion = 0xF195
	SoftwareVersion    = "FT-ECM 4.2.0"
)

// P2 timings the ECU reports in its session control answer: P2 50 ms,
// P2* 5000 ms (ISO 14229-2, P2* in 10 ms units).
const (
	P2Millis     = 50
	P2StarMillis = 5000
)

// Timing of the answers (J1939-21 allows 50..200 ms between BAM packets;
// ISO 15765-2 lets the tester set the gap between consecutive frames).
const (
	AnswerDelay = 5 * time.Millisecond
	BAMGap      = 50 * time.Millisecond
	minCFGap    = time.Millisecond
)

// J1939 and ISO-TP values (SAE J1939-21, -73; ISO 15765-2).
const (
	pfRequest   = 0xEA
	pgnAck      = 0xE800
	pgnTPCM     = 0xEC00
	pgnTPDT     = 0xEB00
	pgnVIN      = 65260
	pgnDM1      = 65226
	pgnDM2      = 65227
	tpBAM       = 0x20
	tpDTBytes   = 7
	addrGlobal  = 0xFF
	prioInfo    = 6
	prioTP      = 7
	ackNegative = 1
	vinTerm     = '*'
	na          = 0xFF
	pad         = 0xAA

	isotpSingle  = 0x0
	isotpFirst   = 0x1
	isotpConsec  = 0x2
	isotpFlowCtl = 0x3
	fcContinue   = 0x0
)

// UDS services and negative response codes (ISO 14229-1).
const (
	sidSession       = 0x10
	sidReadDTC       = 0x19
	sidReadDID       = 0x22
	sidTesterPresent = 0x3E
	positive         = 0x40
	negative         = 0x7F
	suppressPositive = 0x80

	nrcServiceNotSupported = 0x11
	nrcSubFunction         = 0x12
	nrcLength              = 0x13
	nrcOutOfRange          = 0x31

	sessionDefault  = 0x01
	sessionExtended = 0x03
)

// Reply is one frame the ECU puts on the bus Delay after the frame before
// it (the first: after the frame it answers).
type Reply struct {
	ID    uint32 // with wire.CANEFF for 29-bit
	Data  []byte
	Delay time.Duration
}

// ECU is the engine's diagnostic side. The zero value is not ready: use New.
type ECU struct {
	mu           sync.Mutex
	session      byte
	pending      [][]byte // consecutive frames awaiting the tester's flow control
	flowControls int
}

// New returns the engine in the default session.
func New() *ECU { return &ECU{session: sessionDefault} }

// FlowControls counts the tester's flow-control frames the ECU acted on.
func (e *ECU) FlowControls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.flowControls
}

// Handle is the ECU's reaction to one frame on the bus: id carries
// wire.CANEFF for 29-bit. Frames it does not answer give nil.
func (e *ECU) Handle(id uint32, data []byte) []Reply {
	if id&wire.CANEFF != 0 {
		return j1939(id&wire.CANEFFMask, data)
	}
	if id == RequestID && len(data) > 0 {
		return e.isotp(data)
	}
	return nil
}

// j1939 answers a Request addressed to the engine or to everyone. A
// request for a group the engine does not have is NACKed when addressed
// to it alone; a global one goes unanswered (J1939-21 §5.4.2).
func j1939(id uint32, data []byte) []Reply {
	pf, da := byte(id>>16), byte(id>>8)
	if pf != pfRequest || (da != Address && da != addrGlobal) || len(data) < 3 {
		return nil
	}
	sa := byte(id)
	pgn := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16
	switch pgn {
	case pgnVIN:
		return bam(pgnVIN, append([]byte(j1939gen.VIN), vinTerm))
	case pgnDM1:
		return []Reply{{ID: pdu2ID(prioInfo, pgnDM1), Data: j1939gen.ActiveDM1(), Delay: AnswerDelay}}
	case pgnDM2:
		return []Reply{{ID: pdu2ID(prioInfo, pgnDM2), Data: j1939gen.PreviousDM2(), Delay: AnswerDelay}}
	}
	if da == addrGlobal {
		return nil
	}
	nack := []byte{ackNegative, na, na, na, sa, data[0], data[1], data[2]}
	return []Reply{{ID: wire.CANEFF | prioInfo<<26 | pgnAck<<8 | addrGlobal<<8 | Address, Data: nack, Delay: AnswerDelay}}
}

// pdu2ID is a broadcast group's identifier from the engine.
func pdu2ID(prio, pgn uint32) uint32 { return wire.CANEFF | prio<<26 | pgn<<8 | Address }

// bam announces payload to everyone and sends it in TP.DT packets.
func bam(pgn uint32, payload []byte) []Reply {
	n := (len(payload) + tpDTBytes - 1) / tpDTBytes
	cm := []byte{tpBAM, byte(len(payload)), byte(len(payload) >> 8), byte(n), na, byte(pgn), byte(pgn >> 8), byte(pgn >> 16)}
	tp := func(g uint32) uint32 { return wire.CANEFF | prioTP<<26 | g<<8 | addrGlobal<<8 | Address }
	rs := []Reply{{ID: tp(pgnTPCM), Data: cm, Delay: AnswerDelay}}
	for i := range n {
		pkt := bytes.Repeat([]byte{na}, 1+tpDTBytes)
		pkt[0] = byte(i + 1)
		copy(pkt[1:], payload[i*tpDTBytes:])
		rs = append(rs, Reply{ID: tp(pgnTPDT), Data: pkt, Delay: BAMGap})
	}
	return rs
}

// isotp takes single-frame requests and the tester's flow control; the
// ECU's requests all fit a single frame.
func (e *ECU) isotp(data []byte) []Reply {
	switch data[0] >> 4 {
	case isotpFlowCtl:
		return e.flowControl(data)
	case isotpSingle:
		n := int(data[0] & 0x0F)
		if n == 0 || n > len(data)-1 {
			return nil
		}
		return e.send(e.uds(data[1 : 1+n]))
	}
	return nil
}

// uds is the answer to one request, nil for none.
func (e *ECU) uds(req []byte) []byte {
	no := func(nrc byte) []byte { return []byte{negative, req[0], nrc} }
	switch req[0] {
	case sidReadDID:
		if len(req) != 3 {
			return no(nrcLength)
		}
		did := uint16(req[1])<<8 | uint16(req[2])
		var v []byte
		switch did {
		case DIDVIN:
			v = []byte(j1939gen.VIN)
		case DIDSerial:
			v = []byte(j1939gen.ECUSerial)
		case DIDActiveSession:
			e.mu.Lock()
			v = []byte{e.session}
			e.mu.Unlock()
		case DIDSoftwareVersion:
			v = []byte(SoftwareVersion)
		default:
			return no(nrcOutOfRange)
		}
		return append([]byte{sidReadDID | positive, req[1], req[2]}, v...)
	case sidSession:
		if len(req) != 2 {
			return no(nrcLength)
		}
		s := req[1] &^ suppressPositive
		if s != sessionDefault && s != sessionExtended {
			return no(nrcSubFunction)
		}
		e.mu.Lock()
		e.session = s
		e.mu.Unlock()
		if req[1]&suppressPositive != 0 {
			return nil
		}
		return []byte{sidSession | positive, s, P2Millis >> 8, P2Millis & 0xFF, P2StarMillis / 10 >> 8, P2StarMillis / 10 & 0xFF}
	case sidTesterPresent:
		if len(req) != 2 || req[1]&^suppressPositive != 0 {
			return no(nrcSubFunction)
		}
		if req[1]&suppressPositive != 0 {
			return nil
		}
		return []byte{sidTesterPresent | positive, 0}
	case sidReadDTC:
		// reportDTCByStatusMask: the DTCs the workshop scenario reads,
		// P0217 (confirmed, failing) and P0118 (confirmed earlier).
		if len(req) != 3 || req[1] != 0x02 {
			return no(nrcSubFunction)
		}
		return []byte{sidReadDTC | positive, 0x02, 0xFF, 0x02, 0x17, 0x00, 0x2F, 0x01, 0x18, 0x00, 0x28}
	}
	return no(nrcServiceNotSupported)
}

// send frames an answer: one single frame, or a first frame whose
// consecutive frames wait for the tester's flow control.
func (e *ECU) send(resp []byte) []Reply {
	if resp == nil {
		return nil
	}
	if len(resp) <= 7 {
		return []Reply{{ID: ResponseID, Data: padded(append([]byte{byte(len(resp))}, resp...)), Delay: AnswerDelay}}
	}
	ff := append([]byte{isotpFirst<<4 | byte(len(resp)>>8), byte(len(resp))}, resp[:6]...)
	var cfs [][]byte
	for i, sn := 6, 1; i < len(resp); i, sn = i+7, sn+1 {
		cfs = append(cfs, padded(append([]byte{isotpConsec<<4 | byte(sn&0x0F)}, resp[i:min(i+7, len(resp))]...)))
	}
	e.mu.Lock()
	e.pending = cfs
	e.mu.Unlock()
	return []Reply{{ID: ResponseID, Data: ff, Delay: AnswerDelay}}
}

// flowControl releases the consecutive frames: BS of them (0 = all),
// STmin apart (at least minCFGap). Wait and overflow send nothing more.
func (e *ECU) flowControl(data []byte) []Reply {
	e.mu.Lock()
	defer e.mu.Unlock()
	if data[0]&0x0F != fcContinue || len(data) < 3 || len(e.pending) == 0 {
		return nil
	}
	e.flowControls++
	n := len(e.pending)
	if bs := int(data[1]); bs > 0 && bs < n {
		n = bs
	}
	gap := minCFGap
	if st := time.Duration(data[2]) * time.Millisecond; data[2] <= 0x7F && st > gap {
		gap = st
	}
	rs := make([]Reply, 0, n)
	for _, cf := range e.pending[:n] {
		rs = append(rs, Reply{ID: ResponseID, Data: cf, Delay: gap})
	}
	e.pending = e.pending[n:]
	return rs
}

func padded(b []byte) []byte {
	for len(b) < 8 {
		b = append(b, pad)
	}
	return b
}
