package transmit

import (
	"fmt"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/j1939"
)

// J1939 request defaults.
const (
	// DefaultRequestPriority is 6, the priority J1939-21 gives requests.
	DefaultRequestPriority = 6
	// MaxPriority is the lowest J1939 priority: the id carries 3 bits.
	MaxPriority = 7
	// DefaultToolAddress 0xF9 is the J1939 "off-board diagnostic-service
	// tool #1" address: a scan tool announces itself there.
	DefaultToolAddress = 0xF9
	// j1939AnswerWait covers the 200 ms response time (J1939-21 Tr) plus
	// a 17-byte BAM answer at up to 200 ms between packets.
	j1939AnswerWait = 1250 * time.Millisecond
)

// J1939Request is a Request (PGN 59904) for one PGN.
type J1939Request struct {
	Port        string
	PGN         uint32
	Destination uint8 // 0xFF asks every ECU
	Source      uint8
	Priority    uint8
}

// Spec builds the plan: exactly one frame, id
// priority·EA·destination·source, data the PGN in three little-endian bytes.
func (r J1939Request) Spec() (Spec, error) {
	if r.PGN > 0x3FFFF {
		return Spec{}, fmt.Errorf("pgn %d is above the 18-bit range", r.PGN)
	}
	if r.Priority > MaxPriority {
		return Spec{}, fmt.Errorf("priority %d: want 0..%d", r.Priority, MaxPriority)
	}
	if r.Source == j1939.AddrGlobal || r.Source == j1939.AddrNull {
		return Spec{}, fmt.Errorf("source address %02X is not a node address", r.Source)
	}
	id := wire.CANEFF | uint32(r.Priority)<<26 | pfRequest<<16 | uint32(r.Destination)<<8 | uint32(r.Source)
	data := []byte{byte(r.PGN), byte(r.PGN >> 8), byte(r.PGN >> 16)}
	name := j1939.PGNName(r.PGN)
	if name == "" {
		name = "unnamed PGN"
	}
	to := fmt.Sprintf("ECU %02X", r.Destination)
	if r.Destination == j1939.AddrGlobal {
		to = "every ECU (global)"
	}
	sp := Spec{
		Port: r.Port, Medium: MediumCAN, Tool: "j1939_request",
		Summary: fmt.Sprintf("J1939 Request for PGN %d (%s) to %s from %02X", r.PGN, name, to, r.Source),
		Frames:  []Frame{{ID: id, Data: data}},
		Preconditions: []string{
			fmt.Sprintf("no other node on the bus uses source address %02X (check j1939 ECUs: an address clash disturbs that node)", r.Source),
		},
		Unknowns: []string{
			"whether any ECU supports the PGN: it may stay silent or answer with a NACK",
			"a multi-packet answer to a directed request comes by RTS/CTS, which this box does not answer: request to global (FF) to receive it by BAM",
		},
		Expect: &Expect{Kind: ExpectJ1939, PGN: r.PGN, From: r.Destination, Timeout: j1939AnswerWait},
	}
	return sp, nil
}

// DM names the J1939-73 diagnostic messages j1939_request_dm asks for.
var dmPGNs = map[string]uint32{
	"DM1":  j1939.PGNDM1,
	"DM2":  j1939.PGNDM2,
	"DM3":  PGNDM3,
	"DM11": PGNDM11,
}

// DMNames lists the diagnostic messages J1939RequestDM takes, reads
// before clears.
func DMNames() []string { return []string{"DM1", "DM2", "DM3", "DM11"} }

// J1939RequestDM requests one diagnostic message. DM3 and DM11 clear
// fault memory: their plans are erase-class, so Execute refuses them
// unless a person confirms.
func J1939RequestDM(port, dm string, dest, source, priority uint8) (Spec, error) {
	pgn, ok := dmPGNs[dm]
	if !ok {
		return Spec{}, fmt.Errorf("dm %q: want one of %v", dm, DMNames())
	}
	sp, err := J1939Request{Port: port, PGN: pgn, Destination: dest, Source: source, Priority: priority}.Spec()
	if err != nil {
		return sp, err
	}
	sp.Tool = "j1939_request_dm"
	switch dm {
	case "DM3", "DM11":
		what := map[string]string{"DM3": "previously active", "DM11": "active"}[dm]
		sp.Summary = fmt.Sprintf("J1939 %s: CLEAR the %s diagnostic trouble codes of %s (erases fault memory; repair evidence is lost)", dm, what, destName(dest))
		sp.Preconditions = append(sp.Preconditions, "the faults have been read and recorded (DM1/DM2) before they are cleared",
			"the vehicle is stationary with the engine off, as most ECUs require for a clear")
		sp.Unknowns = append(sp.Unknowns, "whether the ECU clears: it answers with an Acknowledgment (PGN 59392) positive or negative")
	default:
		sp.Summary = fmt.Sprintf("J1939 %s request (%s) to %s from %02X", dm, j1939.PGNName(pgn), destName(dest), source)
	}
	return sp, nil
}

func destName(d uint8) string {
	if d == j1939.AddrGlobal {
		return "every ECU (global)"
	}
	return fmt.Sprintf("ECU %02X", d)
}
