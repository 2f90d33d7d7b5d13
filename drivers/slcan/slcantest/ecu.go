package slcantest

import (
	"bytes"
	"sync"
	"time"
)

// J1939 and ISO-TP constants the ECU needs (SAE J1939-21, ISO 15765-2).
const (
	pfRequest    = 0xEA   // Request PGN 59904
	pgnVIN       = 65260  // Vehicle Identification (J1939-71)
	pgnTPCM      = 0xEC00 // TP.CM, connection management
	pgnTPDT      = 0xEB00 // TP.DT, data transfer
	tpBAM        = 0x20   // TP.CM control byte: Broadcast Announce Message
	tpDTBytes    = 7      // payload bytes per TP.DT packet
	addrGlobal   = 0xFF
	prioTP       = 7    // J1939-21 gives transport frames priority 7
	vinDelimiter = '*'  // J1939-71 ends the VIN field with '*'
	pad          = 0xAA // ISO-TP padding this ECU uses
	// DefaultGap is the ECU's pause between BAM packets and between
	// consecutive frames: J1939-21 allows 50..200 ms between BAM packets.
	DefaultGap = 50 * time.Millisecond
)

// UDS (ISO 14229-1) values the ECU answers.
const (
	sidReadDID   = 0x22
	positiveBit  = 0x40
	negative     = 0x7F
	nrcOutOfRng  = 0x31 // requestOutOfRange: an unknown DID
	didVIN       = 0xF190
	isotpSingle  = 0x0
	isotpFirst   = 0x1
	isotpConsec  = 0x2
	isotpFlowCtl = 0x3
)

// Reply is a frame the ECU puts on the bus Delay after the previous one.
type Reply struct {
	ID    uint32 // without flag bits
	Ext   bool
	Data  []byte
	Delay time.Duration
}

// ECU is one simulated engine controller. It answers a J1939 Request for
// the VIN (PGN 65260) addressed to it or to everyone with a BAM, and a
// UDS ReadDataByIdentifier F190 on RequestID with a multi-frame ISO-TP
// answer on ResponseID, sending the consecutive frames only after the
// tester's flow control.
type ECU struct {
	Address    byte   // J1939 source address
	VIN        string // 17 characters
	RequestID  uint32 // UDS physical request id (11-bit)
	ResponseID uint32
	Gap        time.Duration

	mu           sync.Mutex
	pending      [][]byte // consecutive frames awaiting flow control
	flowControls int
}

// NewECU returns an engine ECU at address 0x00 on 0x7E0/0x7E8.
func NewECU(vin string) *ECU {
	return &ECU{Address: 0x00, VIN: vin, RequestID: 0x7E0, ResponseID: 0x7E8, Gap: DefaultGap}
}

// FlowControls counts the flow-control frames the tester sent.
func (e *ECU) FlowControls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.flowControls
}

// Handle is the ECU's reaction to one frame on the bus. It is pure but
// for the ISO-TP state it keeps between the first frame and flow control.
func (e *ECU) Handle(id uint32, ext bool, data []byte) []Reply {
	if ext {
		return e.j1939(id, data)
	}
	if id == e.RequestID && len(data) > 0 {
		return e.isotp(data)
	}
	return nil
}

func (e *ECU) j1939(id uint32, data []byte) []Reply {
	pf, da := byte(id>>16), byte(id>>8)
	if pf != pfRequest || (da != e.Address && da != addrGlobal) || len(data) < 3 {
		return nil
	}
	if pgn := uint32(data[0]) | uint32(data[1])<<8 | uint32(data[2])<<16; pgn != pgnVIN {
		return nil
	}
	return e.bam(pgnVIN, append([]byte(e.VIN), vinDelimiter))
}

// bam announces payload to everyone and sends it in TP.DT packets.
func (e *ECU) bam(pgn uint32, payload []byte) []Reply {
	n := (len(payload) + tpDTBytes - 1) / tpDTBytes
	cm := []byte{tpBAM, byte(len(payload)), byte(len(payload) >> 8), byte(n), 0xFF, byte(pgn), byte(pgn >> 8), byte(pgn >> 16)}
	rs := []Reply{{ID: e.tpID(pgnTPCM), Ext: true, Data: cm}}
	for i := range n {
		pkt := bytes.Repeat([]byte{0xFF}, 1+tpDTBytes)
		pkt[0] = byte(i + 1)
		copy(pkt[1:], payload[i*tpDTBytes:])
		rs = append(rs, Reply{ID: e.tpID(pgnTPDT), Ext: true, Data: pkt, Delay: e.Gap})
	}
	return rs
}

func (e *ECU) tpID(pgn uint32) uint32 {
	return prioTP<<26 | pgn<<8 | addrGlobal<<8 | uint32(e.Address)
}

func (e *ECU) isotp(data []byte) []Reply {
	switch data[0] >> 4 {
	case isotpFlowCtl:
		return e.flowControl(data)
	case isotpSingle:
		n := int(data[0] & 0x0F)
		if n == 0 || n > len(data)-1 {
			return nil
		}
		return e.uds(data[1 : 1+n])
	}
	return nil // this ECU takes single-frame requests only
}

func (e *ECU) uds(req []byte) []Reply {
	if req[0] != sidReadDID || len(req) != 3 {
		return nil
	}
	if did := uint16(req[1])<<8 | uint16(req[2]); did != didVIN {
		return []Reply{{ID: e.ResponseID, Data: padded([]byte{3, negative, sidReadDID, nrcOutOfRng})}}
	}
	resp := append([]byte{sidReadDID | positiveBit, req[1], req[2]}, e.VIN...)
	if len(resp) <= 7 {
		return []Reply{{ID: e.ResponseID, Data: padded(append([]byte{byte(len(resp))}, resp...))}}
	}
	ff := append([]byte{isotpFirst<<4 | byte(len(resp)>>8), byte(len(resp))}, resp[:6]...)
	var cfs [][]byte
	for i, seq := 6, 1; i < len(resp); i, seq = i+7, seq+1 {
		cfs = append(cfs, padded(append([]byte{isotpConsec<<4 | byte(seq&0x0F)}, resp[i:min(i+7, len(resp))]...)))
	}
	e.mu.Lock()
	e.pending = cfs
	e.mu.Unlock()
	return []Reply{{ID: e.ResponseID, Data: ff}}
}

// flowControl releases the consecutive frames: BS of them (0 = all) at
// STmin (ms) or the ECU's gap, whichever is longer.
func (e *ECU) flowControl(data []byte) []Reply {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.flowControls++
	if data[0]&0x0F != 0 || len(data) < 3 || len(e.pending) == 0 {
		return nil // wait or overflow: send nothing more
	}
	n := len(e.pending)
	if bs := int(data[1]); bs > 0 && bs < n {
		n = bs
	}
	gap := e.Gap
	if st := time.Duration(data[2]) * time.Millisecond; data[2] <= 0x7F && st > gap {
		gap = st
	}
	rs := make([]Reply, 0, n)
	for _, cf := range e.pending[:n] {
		rs = append(rs, Reply{ID: e.ResponseID, Data: cf, Delay: gap})
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
