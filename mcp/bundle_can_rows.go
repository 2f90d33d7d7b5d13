package mcp

import (
	"time"

	"fieldtap/services/canbus"
)

// canBusRow is one CAN port's summary (can_buses).
type canBusRow struct {
	Name        string     `json:"port"`
	Bitrate     int        `json:"bitrate"`
	Frames      uint64     `json:"frames"`
	Standard    uint64     `json:"standard_frames"`
	Extended    uint64     `json:"extended_frames"`
	Remote      uint64     `json:"remote_frames"`
	FD          uint64     `json:"fd_frames"` // CAN FD frames
	ErrorFrames uint64     `json:"error_frames"`
	DistinctIDs int        `json:"distinct_ids"`
	IDOverflow  uint64     `json:"id_table_overflow"` // frames whose new id found the table full
	First       *time.Time `json:"first_time"`
	Last        *time.Time `json:"last_time"`
	// MeanLoad is null, with a reason, when the capture spans no time.
	MeanLoad       *float64     `json:"mean_load"`
	MeanLoadReason string       `json:"mean_load_reason,omitempty"`
	PeakLoad       float64      `json:"peak_load_1s"`
	Store          ringStatsRow `json:"frame_store"`
	// Link is null, with a reason, when the port's source has no driver
	// that reports one.
	Link       *canLinkRow `json:"link"`
	LinkReason string      `json:"link_reason,omitempty"`
}

func canBusRowOf(s canbus.Status) canBusRow {
	return canBusRow{Name: s.Name, Bitrate: s.Bitrate, Frames: s.Frames, Standard: s.Standard, Extended: s.Extended, Remote: s.Remote, FD: s.FD,
		ErrorFrames: s.ErrorFrames, DistinctIDs: s.DistinctIDs, IDOverflow: s.IDOverflow, First: s.First, Last: s.Last,
		MeanLoad: s.MeanLoad, MeanLoadReason: s.MeanLoadReason, PeakLoad: s.PeakLoad, Store: ringStatsRowOf(s.Store),
		Link: rowOrNil(s.Link, func(l canbus.Link) canLinkRow { return canLinkRow(l) }), LinkReason: s.LinkReason}
}

// canLinkRow is the driver's view of the link: a field the driver cannot
// know is null, and note says why.
type canLinkRow struct {
	Driver    string  `json:"driver"` // slcan, socketcan
	Open      bool    `json:"open"`   // frames are being read
	Bitrate   int     `json:"bitrate"`
	Mode      string  `json:"mode"`      // listen-only or normal; empty while not open
	BusState  *string `json:"bus_state"` // error-active, error-warning, error-passive, bus-off
	BusOffs   *uint64 `json:"bus_offs"`
	Restarts  *uint64 `json:"restarts"` // controller restarts after bus-off
	Reopens   int     `json:"reopens"`  // sessions after the first
	LastError string  `json:"last_error,omitempty"`
	Note      string  `json:"note,omitempty"`
}

// canCandumpRow is one port's export: candump -l or ASC text, or BLF
// bytes (base64 in JSON), by format.
type canCandumpRow struct {
	Port         string `json:"port"`
	Format       string `json:"format"`
	Lines        int    `json:"lines"`
	FromRecorder int    `json:"from_recorder"` // lines read from the recorder: older than the store
	Truncated    bool   `json:"truncated"`
	RecorderCut  bool   `json:"recorder_cut"`
	Candump      string `json:"candump,omitempty"`
	ASC          string `json:"asc,omitempty"`
	BLF          []byte `json:"blf_base64,omitempty"`
}

func canCandumpRowOf(x canbus.Candump) canCandumpRow {
	return canCandumpRow{Port: x.Port, Format: string(x.Format), Lines: x.Lines, FromRecorder: x.FromRecorder, Truncated: x.Truncated,
		RecorderCut: x.RecorderCut, Candump: x.Candump, ASC: x.ASC, BLF: x.BLF}
}
