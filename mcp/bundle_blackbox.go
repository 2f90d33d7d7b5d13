package mcp

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/evidence"
	"fieldtap/services/recorder"
	"fieldtap/services/upload"
)

// blackboxTools is the blackbox bundle: the recorder's segments on disk,
// a bounded search over them, and evidence bundles sealed from them
// (docs/recorder.md).
var blackboxTools = []toolDef{listCaptures, findInCaptures, buildEvidencePackage, openCapture, listFiles, uploadBegin, uploadChunk, uploadFinish}

// BlackBox is what the blackbox tools and capture_status read: the
// recorder, the evidence builder, the download counters and the capture
// opener. The first three are states, not missing stores: Recorder is
// nil when the recorder is off (recorder.enabled false, or it could not
// open), Evidence when evidence is off, Downloads without HTTP; the
// tools say so. Captures is what the blackbox bundle needs.
type BlackBox struct {
	Recorder *recorder.Recorder
	// RecorderOff says why Recorder is nil, for capture_status.
	RecorderOff string
	Evidence    *evidence.Builder
	// Downloads counts the HTTP GET /files handler; nil without HTTP.
	Downloads Downloads
	// Captures opens files of store.capture_dir as ports (open_capture).
	Captures CaptureOpener
	// Files lists and describes the files an agent may name (list_files).
	Files FileCatalog
	// Uploads takes files into store.capture_dir and store.data_dir
	// (upload_begin, upload_chunk, upload_finish); nil: uploads are off.
	Uploads *upload.Table
}

// recorderOf is the recorder, or UNAVAILABLE saying why there is none.
func recorderOf(d Deps) (*recorder.Recorder, error) {
	if d.BlackBox.Recorder == nil {
		why := d.BlackBox.RecorderOff
		if why == "" {
			why = "recorder off"
		}
		return nil, unavailable("recorder ("+why+")", "set [recorder] enabled = true (docs/recorder.md) and restart")
	}
	return d.BlackBox.Recorder, nil
}

// recorderSection is capture_status's view of the recorder: its state,
// its files against the quota, what it rotated out and every bound hit.
type recorderSection struct {
	State string `json:"state" jsonschema:"recording, ram_only, closed, or off"`
	Why   string `json:"why,omitempty" jsonschema:"why the recorder is off"`
	// Status is the recorder as a whole; null when off.
	Status   *recorderStatusRow `json:"status" jsonschema:"segments and bytes on disk against quota_bytes, segments_deleted by the quota, writes, syncs, write errors, gaps (gaps_dropped past the journal), recovery at start and the refill; null when off"`
	Pins     []recorderPinRow   `json:"pins" jsonschema:"time ranges kept out of the quota's reach"`
	Evidence *evidenceSection   `json:"evidence" jsonschema:"sealed bundles and triggers waiting for their windows; null without an evidence builder"`
	// Downloads is the HTTP GET /files counters; null without HTTP.
	Downloads *FileStats `json:"downloads" jsonschema:"HTTP GET /files: served, bytes, refused by cause; null when not serving HTTP"`
}

type evidenceSection struct {
	Bundles int          `json:"bundles"`
	Bytes   int64        `json:"bytes" jsonschema:"all bundles together, capped by recorder.evidence_bytes"`
	Pending []pendingRow `json:"pending" jsonschema:"triggers whose window is not recorded yet"`
	Error   string       `json:"error,omitempty" jsonschema:"why the bundles could not be listed"`
}

// recorderStatusRow is the recorder as a whole. A gap is recorder.Gap
// as it is, a document: gaps.json and evidence manifests hold it, and a
// port's status shows its last one.
type recorderStatusRow struct {
	State  string     `json:"state"`            // recording, ram_only, closed
	Reason string     `json:"reason,omitempty"` // why ram_only
	Since  *time.Time `json:"since"`            // when ram_only began
	Dir    string     `json:"dir"`

	Segments     int        `json:"segments"` // closed and open
	Bytes        int64      `json:"bytes"`    // on disk, indexes included
	QuotaBytes   int64      `json:"quota_bytes"`
	QuotaOver    int64      `json:"quota_over_bytes"` // kept past the quota by pins
	FreeBytes    *int64     `json:"free_bytes"`       // left on the file system; null where unknown
	PinnedBytes  int64      `json:"pinned_bytes"`
	Pins         int        `json:"pins"`
	Oldest       *time.Time `json:"oldest_frame"` // on disk
	Newest       *time.Time `json:"newest_frame"` // written
	SegmentBytes int64      `json:"segment_bytes"`
	SegmentAge   string     `json:"segment_age"`

	BytesWritten uint64     `json:"bytes_written"`
	Writes       uint64     `json:"writes"`
	Syncs        uint64     `json:"syncs"`
	LastSync     *time.Time `json:"last_sync"`
	WriteErrors  uint64     `json:"write_errors"`
	Retries      uint64     `json:"retries"`
	Deleted      uint64     `json:"segments_deleted"` // by the quota

	Gaps        []recorder.Gap      `json:"gaps"` // newest last, at most 16; open gaps have a null to
	GapsTotal   int                 `json:"gaps_total"`
	GapsDropped uint64              `json:"gaps_dropped"` // pushed out of the journal
	Recovery    recorderRecoveryRow `json:"recovery"`
	Refill      recorderRefillRow   `json:"refill"`
}

func recorderStatusRowOf(st recorder.Status) recorderStatusRow {
	return recorderStatusRow{State: st.State, Reason: st.Reason, Since: st.Since, Dir: st.Dir, Segments: st.Segments, Bytes: st.Bytes,
		QuotaBytes: st.QuotaBytes, QuotaOver: st.QuotaOver, FreeBytes: st.FreeBytes, PinnedBytes: st.PinnedBytes, Pins: st.Pins,
		Oldest: st.Oldest, Newest: st.Newest, SegmentBytes: st.SegmentBytes, SegmentAge: st.SegmentAge, BytesWritten: st.BytesWritten,
		Writes: st.Writes, Syncs: st.Syncs, LastSync: st.LastSync, WriteErrors: st.WriteErrors, Retries: st.Retries, Deleted: st.Deleted,
		Gaps: st.Gaps, GapsTotal: st.GapsTotal, GapsDropped: st.GapsDropped, Recovery: recorderRecoveryRowOf(st.Recovery),
		Refill: recorderRefillRow(st.Refill)}
}

// recorderRecoveryRow is what the recorder found and did at start.
type recorderRecoveryRow struct {
	At      time.Time `json:"at"`
	Unclean bool      `json:"unclean"` // the last run ended without a clean close
	// Trusted closed segments were taken from their index unread.
	Trusted int `json:"trusted"`
	// Scanned segments had no usable index (left open, or an index that
	// did not match the file) and were read block by block.
	Scanned []recorderScannedRow `json:"scanned"`
	Removed []string             `json:"removed"` // empty segments, orphan indexes, temporary files
	Gap     *recorder.Gap        `json:"gap"`     // the gap this start closes; null on a first start
}

func recorderRecoveryRowOf(r recorder.Recovery) recorderRecoveryRow {
	return recorderRecoveryRow{At: r.At, Unclean: r.Unclean, Trusted: r.Trusted,
		Scanned: mapRows(r.Scanned, func(s recorder.ScannedSegment) recorderScannedRow { return recorderScannedRow(s) }), Removed: r.Removed, Gap: r.Gap}
}

// recorderScannedRow is a segment recovery read block by block.
type recorderScannedRow struct {
	Name     string `json:"name"`
	Frames   uint64 `json:"frames"`
	Bytes    int64  `json:"bytes"`     // kept: whole blocks
	CutBytes int64  `json:"cut_bytes"` // torn tail removed
	Reason   string `json:"reason"`    // why the scan stopped; empty at a clean end
}

// recorderRefillRow is what the start-up refill gave the analysers; a
// port's share is recorder.PortRefill, the document its status holds.
type recorderRefillRow struct {
	Budget   int64                          `json:"budget_bytes"`
	Segments int                            `json:"segments"`
	Bytes    int64                          `json:"bytes"` // segment bytes read
	Frames   uint64                         `json:"frames"`
	From     *time.Time                     `json:"from"` // earliest frame refilled
	To       *time.Time                     `json:"to"`
	Ports    map[string]recorder.PortRefill `json:"ports"`
	// Older is true when recorded frames older than from stay on disk
	// only: the budget did not reach them (search finds them).
	Older bool `json:"older_on_disk"`
}

// recorderPinRow is a time range kept out of the quota's reach.
type recorderPinRow struct {
	ID      string    `json:"id"`
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	Reason  string    `json:"reason"` // the box's note: "evidence ev-…", "operator"
	Created time.Time `json:"created"`
}

// readRecorderSection builds the recorder section; every slice is
// non-nil so the answer matches its schema.
func readRecorderSection(d Deps) recorderSection {
	bb := d.BlackBox
	sec := recorderSection{State: "off", Why: bb.RecorderOff, Pins: []recorderPinRow{}}
	if bb.Downloads != nil {
		st := bb.Downloads.Stats()
		sec.Downloads = &st
	}
	if bb.Recorder == nil {
		if sec.Why == "" {
			sec.Why = "recorder off"
		}
		return sec
	}
	st := bb.Recorder.Status()
	st.Gaps = nonNilGaps(st.Gaps)
	st.Recovery.Scanned = nonNil(st.Recovery.Scanned)
	st.Recovery.Removed = nonNil(st.Recovery.Removed)
	if st.Recovery.Gap != nil {
		g := fixGap(*st.Recovery.Gap)
		st.Recovery.Gap = &g
	}
	if st.Refill.Ports == nil {
		st.Refill.Ports = map[string]recorder.PortRefill{}
	}
	row := recorderStatusRowOf(st)
	sec.State, sec.Why, sec.Status = st.State, "", &row
	sec.Pins = mapRows(nonNil(bb.Recorder.Pins()), func(p recorder.Pin) recorderPinRow { return recorderPinRow(p) })
	if bb.Evidence != nil {
		ev := &evidenceSection{Pending: []pendingRow{}}
		for _, p := range bb.Evidence.Pending() {
			ev.Pending = append(ev.Pending, pendingRowOf(p))
		}
		infos, err := bb.Evidence.List()
		if err != nil {
			ev.Error = err.Error()
		}
		for _, in := range infos {
			ev.Bundles++
			ev.Bytes += in.Bytes
		}
		sec.Evidence = ev
	}
	return sec
}

func nonNilGaps(gs []recorder.Gap) []recorder.Gap {
	out := make([]recorder.Gap, len(gs))
	for i, g := range gs {
		out[i] = fixGap(g)
	}
	return out
}

func fixGap(g recorder.Gap) recorder.Gap {
	if g.NotRecorded == nil {
		g.NotRecorded = map[string]uint64{}
	}
	return g
}

// pendingRow is a bundle waiting for its window to be recorded.
type pendingRow struct {
	ID     string    `json:"id"`
	Due    time.Time `json:"due" jsonschema:"when it is sealed"`
	Pin    string    `json:"pin" jsonschema:"the recorder pin keeping its segments"`
	Reason string    `json:"reason"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
}

func pendingRowOf(p evidence.Pending) pendingRow {
	q := p.Request
	return pendingRow{ID: p.ID, Due: p.Due, Pin: p.PinID, Reason: q.Reason, From: q.At.Add(-q.Before), To: q.At.Add(q.After)}
}

type listCapturesIn struct {
	PortSelector
	window
	Paging
	Projection
}

type segmentRow struct {
	Name      string     `json:"name" jsonschema:"the segment file in recorder.dir (Wireshark's File Set groups them)"`
	Seq       uint64     `json:"seq"`
	Open      bool       `json:"open" jsonschema:"being written now"`
	Created   time.Time  `json:"created"`
	Closed    *time.Time `json:"closed"`
	First     *time.Time `json:"first_frame"`
	Last      *time.Time `json:"last_frame"`
	Frames    uint64     `json:"frames"`
	Bytes     int64      `json:"bytes"`
	Ports     []string   `json:"ports" jsonschema:"ports with frames in it"`
	Pinned    bool       `json:"pinned" jsonschema:"kept out of the quota's reach by a pin"`
	Recovered bool       `json:"recovered" jsonschema:"left open by a kill or power cut, scanned and cut at its last whole block at start"`
	CutBytes  int64      `json:"cut_bytes" jsonschema:"torn tail removed at recovery"`
}

var listCaptures = tool[listCapturesIn, page[segmentRow]]{
	name:  "list_captures",
	reads: readsRecorder,
	desc:  "Recorded pcapng segments on disk, oldest first: times, frames, bytes, ports, pinned, recovered. Filter by port and overlapped window. Gaps, pins: capture_status recorder.",
	hints: readOnly(),
	ids:   []string{"seq"},
	run: func(c *call, in listCapturesIn) (page[segmentRow], error) {
		rec, err := recorderOf(c.d)
		if err != nil {
			return page[segmentRow]{}, err
		}
		sp, err := in.span()
		if err != nil {
			return page[segmentRow]{}, err
		}
		var rows []segmentRow
		for _, s := range rec.Segments() {
			if !segmentHolds(s, string(in.Port), sp) {
				continue
			}
			rows = append(rows, segmentRowOf(s))
		}
		return pageSlice(c, in.Paging, rows, func(r segmentRow) rowKey { return key1(r.Seq) })
	},
}

// segmentHolds reports whether s has frames of port (empty: any) and
// overlaps sp.
func segmentHolds(s recorder.SegmentInfo, port string, sp span) bool {
	if port != "" && !slices.ContainsFunc(s.Ports, func(p recorder.PortIndex) bool { return p.Port == port }) {
		return false
	}
	if s.First == nil || s.Last == nil {
		return sp.since.IsZero() && sp.until.IsZero()
	}
	return (sp.until.IsZero() || s.First.Before(sp.until)) && (sp.since.IsZero() || !s.Last.Before(sp.since))
}

func segmentRowOf(s recorder.SegmentInfo) segmentRow {
	r := segmentRow{Name: s.Name, Seq: s.Seq, Open: s.Open, Created: s.Created, Closed: s.Closed, First: s.First, Last: s.Last,
		Frames: s.Frames, Bytes: s.Bytes, Ports: []string{}, Pinned: s.Pinned, Recovered: s.Recovered != nil}
	for _, p := range s.Ports {
		r.Ports = append(r.Ports, p.Port)
	}
	if s.Recovered != nil {
		r.CutBytes = s.Recovered.CutBytes
	}
	return r
}

// Search bounds: the hits are recorder.MaxFindHits at most; the bytes
// read are recorder.MaxScanBytes at most, in MiB so the schema's range
// stays readable.
const (
	findDefaultScanMiB = int(recorder.DefaultScanBytes >> 20)
	findMaxScanMiB     = int(recorder.MaxScanBytes >> 20)
	// findMaxContains bounds the byte pattern: a longer one is a frame,
	// not a search key.
	findMaxContains = 64
	findMaxPorts    = 16 // more ports than any board has
)

type maxHitsArg int

func (maxHitsArg) argSchema() *jsonschema.Schema {
	return sipCount("hits, oldest first", 1, recorder.MaxFindHits, recorder.DefaultFindHits)
}

type scanMiBArg int

func (scanMiBArg) argSchema() *jsonschema.Schema {
	return withDefault(intSchema(fmt.Sprintf("most MiB read, 1 to %d (default %d)", findMaxScanMiB, findDefaultScanMiB), 1, float64(findMaxScanMiB)), findDefaultScanMiB)
}

type l4PortArg int

func (l4PortArg) argSchema() *jsonschema.Schema {
	return intSchema("TCP/UDP port, either end; needs host", 1, 65535)
}

type hostArg string

func (hostArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MaxLength: ptrTo(45), Description: "IP address, either end"}
}

type containsArg string

func (containsArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: fmt.Sprintf("^([0-9A-Fa-f]{2}){1,%d}$", findMaxContains), Description: fmt.Sprintf("hex bytes (1 to %d) anywhere in the frame", findMaxContains)}
}

type recordedPortsArg []string

func (recordedPortsArg) argSchema() *jsonschema.Schema {
	maxItems := findMaxPorts
	return &jsonschema.Schema{Type: "array", MaxItems: &maxItems, Items: &jsonschema.Schema{Type: "string", MaxLength: ptrTo(64)},
		Description: "recorded port names; empty: all"}
}

// recordedPortArg names a recorded port: one of this run's, or of an
// earlier run whose segments are still on disk.
type recordedPortArg string

func (recordedPortArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MaxLength: ptrTo(64), Description: "recorded port name (list_captures); empty: all"}
}

func (p recordedPortArg) ports() []string {
	if p == "" {
		return nil
	}
	return []string{string(p)}
}

func ptrTo[T any](v T) *T { return &v }

type findIn struct {
	Since   timeArg         `json:"since"`
	Until   timeArg         `json:"until"`
	Port    recordedPortArg `json:"port,omitempty"`
	ID      canIDArg        `json:"can_id,omitempty"`
	Mask    hexMaskArg      `json:"mask,omitempty"`
	MID     *midArg         `json:"mid,omitempty"`
	Host    hostArg         `json:"host,omitempty"`
	L4Port  l4PortArg       `json:"l4_port,omitempty"`
	Has     containsArg     `json:"contains,omitempty"`
	MaxHits maxHitsArg      `json:"max_hits,omitempty"`
	ScanMiB scanMiBArg      `json:"max_scan_mib,omitempty"`
	File    fileNameArg     `json:"file,omitempty" jsonschema:"search this capture file (captures/NAME, as list_files names it) instead of the recorder: any kind --source reads"`
}

// fileNameArg names a file as list_files does: AREA/NAME.
type fileNameArg string

func (fileNameArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MaxLength: ptrTo(255)}
}

type findOut struct {
	Hits []recorderHitRow `json:"hits" jsonschema:"matching frames: segment and block offset, port, link type, time, lengths, the first 64 bytes in hex"`
	// Truncated: max_hits were found and the search stopped.
	Truncated bool            `json:"truncated" jsonschema:"max_hits reached: later frames may match too"`
	Scan      recorderScanRow `json:"scan" jsonschema:"segments and bytes read, frames read, matched (frames that met the criteria), cut (max_scan_mib ended it at cut_at), segments the quota deleted meanwhile, corrupt segments"`
}

// recorderHitRow is one recorded frame a search found.
type recorderHitRow struct {
	Segment string    `json:"segment"`
	Offset  int64     `json:"offset"` // of its block in the segment
	Port    string    `json:"port"`
	Link    uint16    `json:"link_type"`
	Time    time.Time `json:"time"`
	Len     int       `json:"recorded_len"`
	OrigLen int       `json:"wire_len"`
	Head    string    `json:"head"` // hex of the first 64 bytes
}

// recorderScanRow is how far a search over the segments went.
type recorderScanRow struct {
	Segments     int    `json:"segments"`      // segments the query touches
	SegmentsRead int    `json:"segments_read"` // of which finished
	BytesPlanned int64  `json:"bytes_planned"` // bytes of their windows
	BytesRead    int64  `json:"bytes_read"`
	Frames       uint64 `json:"frames"` // frames read (matching or not)
	// Matched counts the frames read that met the query.
	Matched uint64 `json:"matched"`
	// Cut is true when the byte bound ended the scan; frames from cut_at
	// on were not read.
	Cut   bool       `json:"cut"`
	CutAt *time.Time `json:"cut_at"`
	// Gone counts segments the quota deleted between listing and reading.
	Gone int `json:"segments_gone"`
	// Corrupt names segments that stopped being whole blocks before their
	// indexed end (a disk fault since they were written).
	Corrupt []string `json:"corrupt"`
}

func recorderScanRowOf(s recorder.ScanStats) recorderScanRow {
	return recorderScanRow{Segments: s.Segments, SegmentsRead: s.SegmentsRead, BytesPlanned: s.BytesPlanned, BytesRead: s.BytesRead, Frames: s.Frames,
		Matched: s.Matched, Cut: s.Cut, CutAt: s.CutAt, Gone: s.Gone, Corrupt: nonNil(s.Corrupt)}
}

// match parses the criteria; no criterion matches every frame.
func (in findIn) match() (recorder.Match, error) {
	var m recorder.Match
	if in.ID != "" || in.Mask != "" {
		cm, err := canSelect{ID: in.ID, Mask: in.Mask}.match()
		if err != nil {
			return m, err
		}
		m.CANID, m.CANMask, m.HasCAN = cm.id, cm.mask, true
	}
	if in.MID != nil {
		m.MID, m.HasMID = uint8(*in.MID), true
	}
	if in.Host != "" {
		a, err := netip.ParseAddr(string(in.Host))
		if err != nil {
			return m, argErr("host", "an address such as 10.0.0.5 or 2001:db8::1", "%q is not an IP address", in.Host)
		}
		m.Host = a.Unmap()
	}
	if in.L4Port != 0 {
		if !m.Host.IsValid() {
			return m, argErr("l4_port", "give host with l4_port", "a transport port needs a host")
		}
		m.L4Port = uint16(in.L4Port)
	}
	if in.Has != "" {
		m.Contains = make([]byte, len(in.Has)/2)
		for i := range m.Contains {
			m.Contains[i] = byte(hexValue(string(in.Has[2*i : 2*i+2])))
		}
	}
	return m, nil
}

var findInCaptures = tool[findIn, findOut]{
	name:  "find_in_captures",
	reads: readsRecorder,
	desc:  "Search recorded segments, or one capture file (file), in since..until for a CAN id/mask, J1708 MID, IP host (and l4_port) or hex bytes; bounded by max_hits and max_scan_mib, cuts reported. Sends progress.",
	hints: readOnly(),
	run: func(c *call, in findIn) (findOut, error) {
		since, err := in.Since.parse("since")
		if err != nil {
			return findOut{}, err
		}
		until, err := in.Until.parse("until")
		if err != nil {
			return findOut{}, err
		}
		if !until.After(since) {
			return findOut{}, argErr("until", "until must be after since", "%s is not after since %s", in.Until, in.Since)
		}
		m, err := in.match()
		if err != nil {
			return findOut{}, err
		}
		if in.File != "" {
			return findInFile(c, in, since, until, m)
		}
		rec, err := recorderOf(c.d)
		if err != nil {
			return findOut{}, err
		}
		q := recorder.Query{From: since, To: until, Ports: in.Port.ports(), MaxBytes: int64(count(int(in.ScanMiB), findDefaultScanMiB)) << 20,
			Progress: func(p recorder.Progress) {
				c.progress(float64(p.BytesRead), float64(p.BytesPlanned), fmt.Sprintf("%d of %d segments read", p.SegmentsRead, p.Segments))
			}}
		found, err := rec.Find(c.ctx, q, m, count(int(in.MaxHits), recorder.DefaultFindHits))
		if err != nil {
			if c.ctx.Err() != nil {
				return findOut{}, failErr(CodeUnavailable, "the search was cancelled", "narrow since/until or max_scan_mib and call again")
			}
			return findOut{}, fmt.Errorf("search the recorder: %w", err)
		}
		out := findOut{Hits: mapRows(nonNil(found.Hits), func(h recorder.Hit) recorderHitRow { return recorderHitRow(h) }),
			Truncated: found.Truncated, Scan: recorderScanRowOf(found.Scan)}
		if found.Truncated {
			c.warnf("max_hits (%d) reached: later frames may match; narrow since/until or raise max_hits", len(found.Hits))
		}
		if found.Scan.Cut && found.Scan.CutAt != nil {
			c.warnf("max_scan_mib ended the search: frames from %s on were not read", found.Scan.CutAt.Format(time.RFC3339Nano))
		}
		if found.Scan.Gone > 0 {
			c.warnf("%d segments were deleted by the quota while the search ran", found.Scan.Gone)
		}
		return out, nil
	},
}

// Evidence window bounds come from the builder: seconds, so the schema
// reads as a number a person would type.
const evidenceMaxWindowS = int(evidence.MaxWindow / time.Second)

type windowSecondsArg int

func (windowSecondsArg) argSchema() *jsonschema.Schema {
	return intSchema(fmt.Sprintf("seconds, 0 to %d (default 30)", evidenceMaxWindowS), 0, float64(evidenceMaxWindowS))
}

// maxTriggerBytes bounds the answer a caller asks to seal: a tool
// answer is at most the response budget.
const maxTriggerBytes = DefaultMaxResponseBytes

type triggerArg string

func (triggerArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", MaxLength: ptrTo(maxTriggerBytes), Description: "an answer as JSON text, or a label (trigger.json)"}
}

type evidenceIn struct {
	At      timeArg           `json:"at" jsonschema:"the moment"`
	Before  *windowSecondsArg `json:"before_s,omitempty"`
	After   *windowSecondsArg `json:"after_s,omitempty"`
	Ports   recordedPortsArg  `json:"ports,omitempty"`
	Trigger triggerArg        `json:"trigger,omitempty"`
}

type evidenceFile struct {
	Name   string `json:"name" jsonschema:"sandbox name (evidence/ID/FILE): resources/read and HTTP GET /files/NAME take it"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

type evidenceOut struct {
	ID      string            `json:"id"`
	Sealed  bool              `json:"sealed" jsonschema:"false: the window is not over; the bundle is sealed at due"`
	Due     *time.Time        `json:"due" jsonschema:"when a pending bundle is built; null once sealed"`
	From    time.Time         `json:"from"`
	To      time.Time         `json:"to"`
	Frames  map[string]uint64 `json:"frames" jsonschema:"frames sealed per port"`
	Gaps    int               `json:"gaps" jsonschema:"recording gaps inside the window (manifest.json lists them)"`
	Cut     bool              `json:"cut" jsonschema:"the bundle's size bound left frames out"`
	Files   []evidenceFile    `json:"files"`
	Pending *pendingRow       `json:"pending" jsonschema:"the request kept until due; null once sealed"`
}

// evidenceDefaultWindow is before and after when absent: long enough to
// hold a call set-up or a fault's first broadcasts around the moment.
const evidenceDefaultWindow = 30

var buildEvidencePackage = linkedTool[evidenceIn, evidenceOut]{tool: tool[evidenceIn, evidenceOut]{
	name:  "build_evidence_package",
	reads: readsRecorder,
	desc:  "Seal recorded frames around at (before_s, after_s; 30 s each) into an evidence bundle (pcapng, trigger.json, SHA-256 manifest, disclaimer); a future window is sealed when recorded. Returns files, sizes, digests, resource links.",
	hints: writesFile(),
	run: func(c *call, in evidenceIn) (evidenceOut, error) {
		if _, err := recorderOf(c.d); err != nil {
			return evidenceOut{}, err
		}
		b := c.d.BlackBox.Evidence
		if b == nil {
			return evidenceOut{}, unavailable("evidence builder (recorder.evidence_dir could not be opened)", "the daemon's log says why at start-up")
		}
		at, err := in.At.parse("at")
		if err != nil {
			return evidenceOut{}, err
		}
		trig, err := triggerJSON(in.Trigger)
		if err != nil {
			return evidenceOut{}, err
		}
		req := evidence.Request{Reason: "request", At: at, Before: seconds(in.Before), After: seconds(in.After), Ports: in.Ports, Trigger: trig}

		if req.Before+req.After == 0 {
			return evidenceOut{}, argErr("after_s", "give before_s or after_s above 0", "before_s and after_s are both 0: the window is empty")
		}
		m, err := b.Build(c.ctx, req)
		switch {
		case errors.Is(err, evidence.ErrNotYet):
			p, err := b.Trigger(req)
			if err != nil {
				return evidenceOut{}, evidenceRefused(err)
			}
			c.warnf("the window ends after now: the bundle is sealed at %s", p.Due.Format(time.RFC3339))
			row := pendingRowOf(p)
			return evidenceOut{ID: p.ID, Due: &row.Due, From: row.From, To: row.To, Frames: map[string]uint64{}, Files: []evidenceFile{}, Pending: &row}, nil
		case err != nil:
			return evidenceOut{}, evidenceRefused(err)
		}
		out := evidenceOut{ID: m.ID, Sealed: true, From: m.From, To: m.To, Frames: m.Frames, Gaps: len(m.Gaps), Cut: m.Cut, Files: []evidenceFile{}}
		if out.Frames == nil {
			out.Frames = map[string]uint64{}
		}
		for _, f := range m.Files {
			out.Files = append(out.Files, evidenceFile{Name: "evidence/" + m.ID + "/" + f.Name, Bytes: f.Bytes, SHA256: f.SHA256})
		}
		if m.Cut {
			c.warnf("the bundle's size bound (%d MiB) left frames out: narrow before_s/after_s or ports", evidence.MaxBundleBytes>>20)
		}
		if len(m.Gaps) > 0 {
			c.warnf("%d recording gaps fall inside the window; manifest.json lists them", len(m.Gaps))
		}
		return out, nil
	},
}, links: func(out evidenceOut) []resourceLink {
	links := make([]resourceLink, 0, len(out.Files))
	for _, f := range out.Files {
		links = append(links, resourceLink{name: f.Name, bytes: f.Bytes})
	}
	return links
}}

// triggerJSON is what trigger.json holds: the trigger when it is JSON
// text, else the plain label as {"label": …}; null when absent.
func triggerJSON(t triggerArg) ([]byte, error) {
	switch {
	case t == "":
		return []byte("null"), nil
	case json.Valid([]byte(t)):
		return []byte(t), nil
	}
	return json.Marshal(map[string]string{"label": string(t)})
}

// seconds is an optional window side: absent is evidenceDefaultWindow.
func seconds(n *windowSecondsArg) time.Duration {
	if n == nil {
		return evidenceDefaultWindow * time.Second
	}
	return time.Duration(*n) * time.Second
}

// evidenceRefused maps the builder's refusals to the error vocabulary.
func evidenceRefused(err error) error {
	switch {
	case errors.Is(err, evidence.ErrFull):
		return failErr(CodeUnavailable, err.Error(), "the evidence directory is at recorder.evidence_bytes; an operator must remove bundles (the box never deletes evidence)")
	case errors.Is(err, evidence.ErrBusy), errors.Is(err, recorder.ErrPinRefused):
		return failErr(CodeUnavailable, err.Error(), "wait for pending bundles to seal (capture_status recorder.evidence.pending), or ask for a window already recorded")
	}
	return fmt.Errorf("build the evidence bundle: %w", err)
}

// findInFile is find_in_captures over one capture file: the frames of
// since..until in file order, each hit's segment the file and its offset
// the frame's number in the file (0 first).
func findInFile(c *call, in findIn, since, until time.Time, m recorder.Match) (findOut, error) {
	if in.Port != "" {
		return findOut{}, argErr("port", "omit port with file: a file is searched whole", "port %q with file %q", in.Port, in.File)
	}
	files := c.d.BlackBox.Files
	limit := count(int(in.MaxHits), recorder.DefaultFindHits)
	out := findOut{Hits: []recorderHitRow{}}
	vx := files.VXLANPorts()
	st, err := files.Scan(c.ctx, string(in.File), int64(count(int(in.ScanMiB), findDefaultScanMiB))<<20, func(f *recorder.Frame) bool {
		if f.Time.Before(since) || !f.Time.Before(until) || !m.Matches(f, vx) {
			return true
		}
		out.Scan.Matched++
		if len(out.Hits) == limit {
			out.Truncated = true
			return false
		}
		out.Hits = append(out.Hits, recorderHitRow{Segment: f.Segment, Offset: f.Offset, Port: f.Port, Link: f.Link, Time: f.Time,
			Len: len(f.Data), OrigLen: max(f.OrigLen, len(f.Data)), Head: hex.EncodeToString(f.Data[:min(len(f.Data), recorder.HeadBytes)])})
		return true
	})
	if err != nil {
		if c.ctx.Err() != nil {
			return findOut{}, failErr(CodeUnavailable, "the search was cancelled", "narrow since/until or max_scan_mib and call again")
		}
		return findOut{}, argErr("file", "list_files names the capture files (area captures)", "%v", err)
	}
	out.Scan.Segments, out.Scan.SegmentsRead, out.Scan.BytesRead, out.Scan.Frames, out.Scan.Cut = 1, 1, st.Bytes, st.Frames, st.Cut
	out.Scan.Corrupt = []string{}
	if st.Cut {
		at := st.CutAt
		out.Scan.CutAt = &at
		c.warnf("max_scan_mib ended the search: frames from %s on were not read", at.Format(time.RFC3339Nano))
	}
	if out.Truncated {
		c.warnf("max_hits (%d) reached: later frames may match; narrow since/until or raise max_hits", limit)
	}
	return out, nil
}
