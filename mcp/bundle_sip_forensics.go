package mcp

import (
	"errors"
	"fmt"

	"fieldtap/services/sip"
)

// sipForensicsTools is the sip_forensics bundle: what an engineer asks
// after the dialog list — a hand-off to Wireshark, messages by time.
var sipForensicsTools = []toolDef{wiresharkFilter, searchByTime}

type wiresharkFilterIn struct {
	CallID callIDArg `json:"call_id"`
	// NoMedia leaves the RTP/RTCP terms out (a default false reads as
	// "with media", so the flag is the exception).
	NoMedia bool `json:"no_media,omitempty" jsonschema:"only the SIP messages, no RTP/RTCP terms"`
}

type wiresharkFilterOut struct {
	CallID string `json:"call_id"`
	Filter string `json:"filter" jsonschema:"the display filter for Wireshark or tshark -Y: the call's SIP messages or its media"`
	SIP    string `json:"sip" jsonschema:"only the SIP part"`
	Media  string `json:"media" jsonschema:"only the media part; empty without media flows"`
	// MediaFlows counts the flows in media; FlowsLeftOut those past the bound.
	MediaFlows   int    `json:"media_flows"`
	FlowsLeftOut int    `json:"flows_left_out" jsonschema:"media flows past 16, not in the filter"`
	MediaReason  string `json:"media_reason,omitempty" jsonschema:"why media is empty"`
}

var wiresharkFilter = tool[wiresharkFilterIn, wiresharkFilterOut]{
	name:  "generate_wireshark_filter",
	desc:  "A Wireshark display filter for one call: its Call-ID (escaped per the filter grammar) or each RTP/RTCP flow the box tied to it.",
	hints: readOnly(),
	run: func(c *call, in wiresharkFilterIn) (wiresharkFilterOut, error) {
		sn, err := sipSnapshot(c.d)
		if err != nil {
			return wiresharkFilterOut{}, err
		}
		dl, err := lookupDialog(sn, in.CallID)
		if err != nil {
			return wiresharkFilterOut{}, err
		}
		var flows []sip.MediaFlow
		reason := ""
		switch {
		case in.NoMedia:
			reason = "no_media was asked"
		case c.d.Media == nil:
			reason = "this box has no RTP analyser"
		default:
			flows = c.d.Media.Snapshot(false).Flows(dl.CallID)
			if len(flows) == 0 {
				reason = "no RTP or RTCP flow was tied to this call"
			}
		}
		f, err := sip.WiresharkFilter(dl.CallID, flows)
		if errors.Is(err, sip.ErrFilterControl) {
			return wiresharkFilterOut{}, argErr("call_id", "filter on the call's addresses instead (list_dialogs gives src and dst)", "%v: a display filter cannot carry it", err)
		}
		if err != nil {
			return wiresharkFilterOut{}, err
		}
		return wiresharkFilterOut{CallID: dl.CallID, Filter: f.All, SIP: f.SIP, Media: f.Media,
			MediaFlows: len(flows) - f.FlowsLeftOut, FlowsLeftOut: f.FlowsLeftOut, MediaReason: reason}, nil
	},
}

type searchByTimeIn struct {
	window
	Filter filterArg `json:"filter,omitempty"`
	Paging
	Projection
}

// timeRow is one message in time order.
type timeRow struct {
	CallID string `json:"call_id"`
	messageRow
	at, seq uint64 // the cursor key: capture time, then store sequence
}

var searchByTime = tool[searchByTimeIn, page[timeRow]]{
	name:  "search_by_time",
	desc:  "SIP messages in a capture-time window (since, until), of the dialogs a filter matches, in time order; paged by a time and sequence cursor.",
	hints: readOnly(),
	ids:   []string{"call_id", "index"},
	text:  []textSource{textSIP},
	run: func(c *call, in searchByTimeIn) (page[timeRow], error) {
		sn, err := sipSnapshot(c.d)
		if err != nil {
			return page[timeRow]{}, err
		}
		sp, err := in.span()
		if err != nil {
			return page[timeRow]{}, err
		}
		e, err := in.Filter.compile()
		if err != nil {
			return page[timeRow]{}, err
		}
		// The matches are sorted by (time, sequence): messages from
		// several ports arrive out of time order. The store bounds them.
		var rows []timeRow
		sn.RangeMessages(0, func(m *sip.Message) bool {
			if !sp.holds(m.Time) {
				return true
			}
			if dl := sn.DialogByID(m.DialogID); dl == nil || !e.Match(dl) {
				return true
			}
			// Offset so times before 1970 still sort first as unsigned keys.
			at := uint64(m.Time.UnixNano()) ^ 1<<63
			rows = append(rows, timeRow{CallID: m.CallID, messageRow: newMessageRow(m), at: at, seq: m.Seq})
			return c.ctx.Err() == nil
		})
		if err := c.ctx.Err(); err != nil {
			return page[timeRow]{}, fmt.Errorf("search_by_time cancelled: %w", err)
		}
		return pageSlice(c, in.Paging, rows, func(r timeRow) rowKey { return rowKey{r.at, r.seq} })
	},
}
