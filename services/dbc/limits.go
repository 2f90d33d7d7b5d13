package dbc

// Bounds. A DBC file comes from an operator, but it may be anything an
// operator was sent, so every size that grows memory has a limit.
const (
	// MaxFileBytes bounds one file: the full SAE J1939 DBC is about 2 MB;
	// a bigger file is more likely a wrong file than a bigger database.
	MaxFileBytes = 4 << 20
	// MaxMessages bounds messages per database: 2048 11-bit ids plus a
	// J1939 database's ~1 900 PGNs with room to spare.
	MaxMessages = 8192
	// MaxSignalsPerMessage bounds one message; a 64-byte frame of
	// multiplexed 1-bit flags stays well below it.
	MaxSignalsPerMessage = 1024
	// MaxSignals bounds a whole database.
	MaxSignals = 65536
	// MaxMessageBytes is the largest message length accepted: J1939-21
	// transport carries at most 1785 bytes, and DBCs describe reassembled
	// TP payloads (css_tp_j1939.dbc has a 40-byte message).
	MaxMessageBytes = 1785
	// MaxSignalBits is the widest signal a uint64 holds.
	MaxSignalBits = 64
	// MaxMuxRanges bounds the SG_MUL_VAL_ ranges of one signal.
	MaxMuxRanges = 64
	// MaxMuxDepth bounds multiplexer nesting (a switch selected by a
	// switch …); real files nest two levels.
	MaxMuxDepth = 8
	// MaxSPN is the largest J1939 SPN: 19 bits (J1939-71).
	MaxSPN = 1<<19 - 1
	// MaxDatabaseBytes bounds the heap one parsed database holds (its
	// estimated Bytes): a 3 MB file of 8,100 messages and 40,500 signals
	// is estimated at 9.4 MiB (7.1 MiB measured), so this admits any real
	// database and refuses one built to fill the box (short value labels
	// cost many times their text).
	MaxDatabaseBytes = 16 << 20
	// MaxRegistryBytes bounds what every loaded database together holds:
	// a quarter of the default 128 MiB runtime memory limit, the rest
	// being the capture stores'.
	MaxRegistryBytes = 32 << 20
	// MaxWarnings bounds the deviation warnings kept for one file; the
	// rest are counted in a last warning.
	MaxWarnings = 32
	// maxReasonBytes caps a parser reason quoted in an error.
	maxReasonBytes = 200
)
