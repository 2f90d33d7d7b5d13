package mcp

import "fieldtap/services/canre"

// The canre bundle's answer rows, built from what services/canre returns
// (rows.go says why some are conversions).

// reFieldRow is a candidate field in DBC numbering.
type reFieldRow struct {
	StartBit  int  `json:"start_bit"`
	Length    int  `json:"length"`
	BigEndian bool `json:"big_endian"`
	Signed    bool `json:"signed"`
}

func reFieldRowOf(f canre.Field) reFieldRow { return reFieldRow(f) }

type reCounterRow struct {
	Field reFieldRow `json:"field"`
	// Score is the share of consecutive frames whose field stepped +1;
	// skips are steps neither +1 nor a repeat.
	Score    float64 `json:"score"`
	Wraps    int     `json:"wraps"`
	Distinct int     `json:"distinct_values"`
	Skips    int     `json:"skips"`
}

type reCountersRow struct {
	Method     string         `json:"method"`
	Frames     int            `json:"frames"`
	Candidates []reCounterRow `json:"candidates"`
	Truncated  bool           `json:"truncated"`
}

func reCountersRowOf(c canre.Counters) reCountersRow {
	return reCountersRow{Method: c.Method, Frames: c.Frames, Truncated: c.Truncated,
		Candidates: mapRows(c.Candidates, func(k canre.CounterCandidate) reCounterRow {
			return reCounterRow{Field: reFieldRowOf(k.Field), Score: k.Score, Wraps: k.Wraps, Distinct: k.Distinct, Skips: k.Skips}
		})}
}

type reChecksumRow struct {
	Byte      int     `json:"byte"` // 0-based
	Algorithm string  `json:"algorithm"`
	Score     float64 `json:"score"` // share of frames it explains
	Matches   int     `json:"matches"`
}

type reChecksumsRow struct {
	Method     string          `json:"method"`
	Frames     int             `json:"frames"`
	Algorithms []string        `json:"algorithms"`
	Candidates []reChecksumRow `json:"candidates"`
	Truncated  bool            `json:"truncated"`
}

func reChecksumsRowOf(c canre.Checksums) reChecksumsRow {
	return reChecksumsRow{Method: c.Method, Frames: c.Frames, Algorithms: c.Algorithms, Truncated: c.Truncated,
		Candidates: mapRows(c.Candidates, func(k canre.ChecksumCandidate) reChecksumRow { return reChecksumRow(k) })}
}

type reByteRow struct {
	Byte     int     `json:"byte"`
	Entropy  float64 `json:"entropy"`
	Distinct int     `json:"distinct_values"`
	Min      int     `json:"min"`
	Max      int     `json:"max"`
	Changes  int     `json:"changes"` // consecutive frames where it differs
}

type reBitRow struct {
	Bit      int     `json:"bit"` // DBC numbering: byte·8 + bit, bit 0 the LSB
	Ones     float64 `json:"ones"`
	Entropy  float64 `json:"entropy"`
	Flips    int     `json:"flips"`
	FlipRate float64 `json:"flip_rate"` // flips per consecutive pair of frames
}

type reEntropyRow struct {
	Method string      `json:"method"`
	Frames int         `json:"frames"`
	Bytes  []reByteRow `json:"bytes"`
	Bits   []reBitRow  `json:"bits"`
}

func reEntropyRowOf(e canre.Entropy) reEntropyRow {
	bytes := mapRows(e.Bytes, func(b canre.ByteStat) reByteRow { return reByteRow(b) })
	bits := mapRows(e.Bits, func(b canre.BitStat) reBitRow { return reBitRow(b) })
	return reEntropyRow{Method: e.Method, Frames: e.Frames, Bytes: bytes, Bits: bits}
}

type reSignalRow struct {
	Field       reFieldRow `json:"field"`
	Kind        string     `json:"kind"` // flag, counter or value
	Distinct    int        `json:"distinct_values"`
	Min         int64      `json:"min_raw"`
	Max         int64      `json:"max_raw"`
	LSBFlipRate float64    `json:"lsb_flip_rate"`
	MSBFlipRate float64    `json:"msb_flip_rate"`
	// CoChange is null for a one-bit field or an MSB that never flips.
	CoChange *float64 `json:"co_change"`
}

type reSignalsRow struct {
	Method       string        `json:"method"`
	Frames       int           `json:"frames"`
	LittleEndian []reSignalRow `json:"little_endian"`
	BigEndian    []reSignalRow `json:"big_endian"`
	Truncated    bool          `json:"truncated"`
}

func reSignalsRowOf(s canre.Signals) reSignalsRow {
	row := func(k canre.SignalCandidate) reSignalRow {
		return reSignalRow{Field: reFieldRowOf(k.Field), Kind: k.Kind, Distinct: k.Distinct, Min: k.Min, Max: k.Max,
			LSBFlipRate: k.LSBFlipRate, MSBFlipRate: k.MSBFlipRate, CoChange: k.CoChange}
	}
	return reSignalsRow{Method: s.Method, Frames: s.Frames, LittleEndian: mapRows(s.LittleEndian, row), BigEndian: mapRows(s.BigEndian, row), Truncated: s.Truncated}
}

type reCorrelationRow struct {
	Field reFieldRow `json:"field"`
	Pairs int        `json:"pairs"`
	// R, slope and intercept are null, with a reason, when the pairs are
	// too few or either side never varies.
	R         *float64 `json:"r"`
	Slope     *float64 `json:"slope"`
	Intercept *float64 `json:"intercept"`
	Reason    string   `json:"reason,omitempty"`
}

type reCorrelationsRow struct {
	Method     string             `json:"method"`
	Reference  string             `json:"reference"`
	MaxHoldSec float64            `json:"max_hold_seconds"`
	Tested     int                `json:"fields_tested"`
	Results    []reCorrelationRow `json:"results"`
	Truncated  bool               `json:"truncated"`
}

func reCorrelationsRowOf(c canre.Correlations) reCorrelationsRow {
	return reCorrelationsRow{Method: c.Method, Reference: c.Reference, MaxHoldSec: c.MaxHoldSec, Tested: c.Tested, Truncated: c.Truncated,
		Results: mapRows(c.Results, func(r canre.Correlation) reCorrelationRow {
			return reCorrelationRow{Field: reFieldRowOf(r.Field), Pairs: r.Pairs, R: r.R, Slope: r.Slope, Intercept: r.Intercept, Reason: r.Reason}
		})}
}
