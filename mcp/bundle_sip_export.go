package mcp

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/sip"
)

// Bounds of the ladder and export tools. Each answer is one object (a
// drawing, a file written), so each has its own named cap rather than a
// page.
const (
	ladderDefaultMessages = 200
	ladderMaxMessages     = sip.DefaultMessagesPerDialog // every message a dialog keeps
	exportDefaultDialogs  = 1000
	// exportMaxDialogs keeps one file near the frame and byte bounds of
	// sip.MaxExportFrames for ordinary calls (~20 frames each).
	exportMaxDialogs = 10_000
)

type maxMessagesArg int

func (maxMessagesArg) argSchema() *jsonschema.Schema {
	return sipCount("arrows", 1, ladderMaxMessages, ladderDefaultMessages)
}

type ladderIn struct {
	CallID      callIDArg      `json:"call_id"`
	MaxMessages maxMessagesArg `json:"max_messages,omitempty"`
}

type ladderStartLine struct {
	Index     int            `json:"index" jsonschema:"the message's index, as its arrow's #label and get_message take it"`
	StartLine untrusted.Text `json:"start_line"`
}

type ladderOut struct {
	CallID string `json:"call_id"`
	// Ladder is the box's own drawing: lanes, times, arrows and labels
	// it computed; what the senders wrote is in start_lines.
	Ladder     string            `json:"ladder" jsonschema:"the drawing: one lane per IP:port endpoint, one arrow per message labelled #index and its method or status code with the code's standard meaning"`
	StartLines []ladderStartLine `json:"start_lines" jsonschema:"each drawn message's start line as the sender wrote it (fenced), by index"`
	Kept       int               `json:"messages_kept"`
	Evicted    int               `json:"messages_evicted" jsonschema:"messages whose bytes the store's byte bound evicted: not drawn"`
	Shed       int               `json:"messages_shed" jsonschema:"messages past the per-dialog cap, never kept"`
	Undrawn    int               `json:"messages_not_drawn" jsonschema:"kept messages past max_messages"`
}

var renderLadder = tool[ladderIn, ladderOut]{
	name:  "render_ladder",
	reads: readsSIP,
	desc:  "A text ladder of one dialog: a lane per IP:port, arrows labelled by index and method or status code, times; the senders' start lines apart in start_lines. At most max_messages arrows.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in ladderIn) (ladderOut, error) {
		sn := c.d.SIP.Snapshot()
		dl, err := lookupDialog(sn, in.CallID)
		if err != nil {
			return ladderOut{}, err
		}
		lad := sip.RenderLadder(sn, dl, count(int(in.MaxMessages), ladderDefaultMessages))
		out := ladderOut{CallID: dl.CallID, Ladder: lad.Drawing, StartLines: make([]ladderStartLine, len(lad.Arrows)),
			Kept: lad.Kept, Evicted: lad.Evicted, Shed: lad.Shed, Undrawn: lad.Undrawn}
		for i, a := range lad.Arrows {
			out.StartLines[i] = ladderStartLine{Index: a.Index, StartLine: untrusted.Text(a.StartLine)}
		}
		if lad.Undrawn > 0 {
			c.warnf("%d messages past max_messages are not drawn", lad.Undrawn)
		}
		return out, nil
	},
}

type maxDialogsArg int

func (maxDialogsArg) argSchema() *jsonschema.Schema {
	return sipCount("dialogs, oldest first", 1, exportMaxDialogs, exportDefaultDialogs)
}

type exportIn struct {
	CallID     callIDArg     `json:"call_id,omitempty" jsonschema:"one dialog; or filter"`
	Filter     filterArg     `json:"filter,omitempty" jsonschema:"the dialogs it matches; or call_id"`
	MaxDialogs maxDialogsArg `json:"max_dialogs,omitempty"`
}

type exportOut struct {
	exportResultRow
	Dir            string `json:"dir"`
	DialogsMatched int    `json:"dialogs_matched"`
}

// exportResultRow is what a pcapng export holds and what it could not
// put in it (sip.ExportResult).
type exportResultRow struct {
	Path               string     `json:"path"`
	Dialogs            int        `json:"dialogs"`
	Messages           int        `json:"messages"`
	Frames             int        `json:"frames"`
	Bytes              int64      `json:"bytes"`
	FromRecorder       int        `json:"from_recorder"`
	MessagesEvicted    int        `json:"messages_evicted"`
	MessagesShed       int        `json:"messages_shed"`
	MessagesMissing    int        `json:"messages_missing"`
	Truncated          bool       `json:"truncated"`
	MediaFlows         int        `json:"media_flows"`
	RTPFrames          int        `json:"rtp_frames"`
	RTCPFrames         int        `json:"rtcp_frames"`
	MediaFramesMissing int        `json:"media_frames_missing"`
	ScanCut            bool       `json:"scan_cut"`
	ScanCutAt          *time.Time `json:"scan_cut_at"`
}

func exportResultRowOf(r sip.ExportResult) exportResultRow {
	return exportResultRow{Path: r.Path, Dialogs: r.Dialogs, Messages: r.Messages, Frames: r.Frames, Bytes: r.Bytes, FromRecorder: r.FromRecorder,
		MessagesEvicted: r.MessagesEvicted, MessagesShed: r.MessagesShed, MessagesMissing: r.MessagesMissing, Truncated: r.Truncated,
		MediaFlows: r.MediaFlows, RTPFrames: r.RTPFrames, RTCPFrames: r.RTCPFrames, MediaFramesMissing: r.MediaFramesMissing,
		ScanCut: r.ScanCut, ScanCutAt: r.ScanCutAt}
}

// exportCapture links the file it wrote as the sandbox's exports root
// names it (the export directory is that root), as
// build_evidence_package links its bundle's files.
var exportCapture = linkedTool[exportIn, exportOut]{tool: tool[exportIn, exportOut]{
	name:  "export_capture",
	reads: readsSIP | readsFrames,
	desc:  "Write the frames (SIP, RTP, RTCP) of one dialog or of the dialogs a filter matches (at most max_dialogs) to a new pcapng file in the export directory; reports the path and what is missing.",
	hints: writesFile(),
	run: func(c *call, in exportIn) (exportOut, error) {
		sn := c.d.SIP.Snapshot()
		if (in.CallID == "") == (in.Filter == "") {
			return exportOut{}, argErr("call_id", "call_id for one dialog, filter for many", "give exactly one of call_id and filter")
		}
		e, err := in.Filter.compile()
		if err != nil {
			return exportOut{}, err
		}
		sel, err := sip.SelectExport(sn, string(in.CallID), func(dl *sip.Dialog) bool { return e.Match(dl) }, count(int(in.MaxDialogs), exportDefaultDialogs))
		if errors.Is(err, sip.ErrNoDialog) {
			return exportOut{}, noDialog(in.CallID)
		}
		if err != nil {
			return exportOut{}, err
		}
		media := c.d.Media.Snapshot(false).CallFlows(sel.Dialogs)
		res, err := c.d.SIPExport.Export(c.ctx, sn, sel.Dialogs, media, time.Now())
		if errors.Is(err, sip.ErrNothingToExport) {
			return exportOut{}, notFound("the frames of these dialogs are gone from the frame rings and the recorder; nothing was written", "%v", err)
		}
		if err != nil {
			return exportOut{}, fmt.Errorf("export to %s (is store.export_dir writable, with space?): %w", c.d.SIPExport.Dir(), err)
		}
		for _, w := range sel.Shortfalls(res) {
			c.warnf("%s", w)
		}
		return exportOut{exportResultRow: exportResultRowOf(res), Dir: c.d.SIPExport.Dir(), DialogsMatched: sel.Matched}, nil
	},
}, links: func(out exportOut) []resourceLink {
	return []resourceLink{{name: "exports/" + filepath.Base(out.Path), bytes: out.Bytes}}
}}
