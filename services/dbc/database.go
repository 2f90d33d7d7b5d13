package dbc

import (
	"slices"
	"time"
)

// Database is one loaded DBC file. It is read-only after Parse, so any
// number of goroutines may decode with it.
type Database struct {
	Name     string    // the registry name; the file name for Parse
	File     string    // the file it came from
	LoadedAt time.Time // set by Registry.Load
	// Notes say what the wrapper rewrote or skipped to read the file.
	Notes []string
	// Warnings name the lines of deviations from the DBC format that
	// were read anyway (a statement without its ';'): the file loads,
	// and whoever wrote it may want to fix it.
	Warnings []string
	Messages []Message // by file order
	Signals  int       // over every message
	// Bytes estimates the heap the parsed database holds (footprint.go);
	// Parse refuses one over MaxDatabaseBytes.
	Bytes int64
	// J1939 is true when the file declares J1939 (ProtocolType or
	// VFrameFormat J1939PG): its extended messages then also match a frame
	// by PGN whatever its source address and priority.
	J1939 bool
	byID  map[uint32]int32 // key: id | extKey
	byPGN map[uint32]int32 // J1939 messages with a unique PGN
}

// extKey marks an extended id in lookup keys, as the DBC file does.
const extKey = 0x80000000

// Match says how a frame found its message.
type Match uint8

const (
	MatchNone  Match = iota
	MatchExact       // the frame's id is the message's id
	MatchPGN         // a J1939 message matched by PGN (priority, SA, DA differ)
)

func (m Match) String() string {
	switch m {
	case MatchExact:
		return "exact"
	case MatchPGN:
		return "j1939-pgn"
	}
	return "none"
}

// Message is one BO_ definition.
type Message struct {
	ID          uint32 // 11- or 29-bit, no flag
	Extended    bool
	Name        string
	Size        int // bytes, as declared
	Transmitter string
	Comment     string
	Line        int
	J1939       bool // matches by PGN too (see Database.J1939)
	Signals     []Signal
	order       []int // evaluation order: multiplexers before what they select
}

// Signal is one SG_ definition with its multiplexing resolved.
type Signal struct {
	Name      string
	Start     int // as written: LSB (Intel) or MSB (Motorola, sawtooth)
	Size      int // bits
	BigEndian bool
	Signed    bool
	// Float is 32 or 64 for IEEE signals (SIG_VALTYPE_), 0 for integers.
	Float          int
	Factor, Offset float64
	Min, Max       float64
	Unit           string
	Comment        string
	Line           int
	// Switch is true for a multiplexer (M, or mNM).
	Switch bool
	// Mux is the index of the multiplexer that selects this signal, -1
	// when the signal is always present; MuxRanges are the raw values
	// that select it (inclusive).
	Mux       int
	MuxRanges [][2]int64
	// Labels are the value descriptions (VAL_) by raw value.
	Labels map[int64]string
	// SPN is the J1939 suspect parameter number the file gives the signal
	// (BA_ "SPN" SG_ …), 0 when it gives none.
	SPN uint32
	// lin is the first bit in MSB-first order for Motorola signals.
	lin int
}

// Lookup finds the message for a frame: the exact id first, then, for an
// extended frame and a J1939 database, the PGN.
func (db *Database) Lookup(id uint32, extended bool) (*Message, Match) {
	key := id
	if extended {
		key |= extKey
	}
	if i, ok := db.byID[key]; ok {
		return &db.Messages[i], MatchExact
	}
	if extended && db.byPGN != nil {
		if i, ok := db.byPGN[pgnOf(id)]; ok {
			return &db.Messages[i], MatchPGN
		}
	}
	return nil, MatchNone
}

// Matches reports whether a frame carries m, as Lookup would find it.
func (m *Message) Matches(id uint32, extended bool) Match {
	switch {
	case extended != m.Extended:
		return MatchNone
	case id == m.ID:
		return MatchExact
	case m.J1939 && pgnOf(id) == pgnOf(m.ID):
		return MatchPGN
	}
	return MatchNone
}

// MessageByName returns the named message or nil.
func (db *Database) MessageByName(name string) *Message {
	i := slices.IndexFunc(db.Messages, func(m Message) bool { return m.Name == name })
	if i < 0 {
		return nil
	}
	return &db.Messages[i]
}

// SignalIndex returns the index of the named signal or -1.
func (m *Message) SignalIndex(name string) int {
	return slices.IndexFunc(m.Signals, func(s Signal) bool { return s.Name == name })
}

// pgnOf is the J1939 PGN of a 29-bit id: for PDU1 (PF < 240) the PS byte
// is a destination address, not part of the PGN.
func pgnOf(id uint32) uint32 {
	pgn := id >> 8 & 0x3FFFF
	if pgn>>8&0xFF < 240 {
		pgn &^= 0xFF
	}
	return pgn
}
