package mcp

import (
	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/rtp"
)

// mediaTools is the media bundle: RTP streams and their figures, per-call
// diagnostics, the codec negotiation and DTMF.
var mediaTools = []toolDef{rtpStreams, rtpStats, mediaDiagnostics, codecNegotiation, dtmfEvents}

// mediaSnapshot is a copy of the media analyser's tables, with warnings
// for what they do not hold. Intervals are copied only when asked: they
// are most of a stream's memory.
func mediaSnapshot(c *call, intervals bool) *rtp.Snapshot {
	sn := c.d.Media.Snapshot(intervals)
	if !sn.Stats.Heuristic && sn.Stats.Unsignalled > 0 {
		c.warnf("heuristic RTP detection is off: %d RTP-looking datagrams to or from unsignalled addresses were counted, not tracked", sn.Stats.Unsignalled)
	}
	if sn.Stats.StreamsEvicted > 0 {
		c.warnf("%d streams were evicted at the analyser's stream bound, ended ones first, and are not listed", sn.Stats.StreamsEvicted)
	}
	if sn.Stats.DialogsEvicted > 0 {
		c.warnf("%d calls' SDP were evicted at the analyser's dialog bound, oldest first: their offers, answers and a=crypto keys are not kept", sn.Stats.DialogsEvicted)
	}
	if sn.Stats.EndpointsEvicted > 0 {
		c.warnf("%d signalled media addresses were evicted at the analyser's endpoint bound, oldest first: RTP first seen at them after that is counted as unsignalled", sn.Stats.EndpointsEvicted)
	}
	return sn
}

// mosArg is an E-model MOS, 1 to 4.5 (G.107 Annex B's range).
type mosArg float64

func (mosArg) argSchema() *jsonschema.Schema {
	lo, hi := 1.0, 4.5
	return &jsonschema.Schema{Type: "number", Minimum: &lo, Maximum: &hi, Description: "MOS at most this, 1 to 4.5; ungrounded never match"}
}

// lossPctArg is a loss percentage.
type lossPctArg float64

func (lossPctArg) argSchema() *jsonschema.Schema {
	lo, hi := 0.0, 100.0
	return &jsonschema.Schema{Type: "number", Minimum: &lo, Maximum: &hi, Description: "loss at least this %, 0 to 100"}
}

type rtpStreamsIn struct {
	CallID     callIDArg   `json:"call_id,omitempty" jsonschema:"only this call's streams"`
	Orphaned   *bool       `json:"orphaned,omitempty" jsonschema:"true: only unsignalled (heuristic) streams; false: only signalled"`
	MaxMOS     *mosArg     `json:"max_mos,omitempty"`
	MinLossPct *lossPctArg `json:"min_loss_pct,omitempty"`
	Codec      string      `json:"codec,omitempty" jsonschema:"main codec name, any case, e.g. PCMA"`
	Paging
	Projection
}

func (in rtpStreamsIn) filter() rtp.StreamFilter {
	f := rtp.StreamFilter{CallID: string(in.CallID), Orphaned: in.Orphaned, Codec: in.Codec}
	if in.MinLossPct != nil {
		v := float64(*in.MinLossPct)
		f.MinLossPct = &v
	}
	if in.MaxMOS != nil {
		v := float64(*in.MaxMOS)
		f.MaxMOS = &v
	}
	return f
}

var rtpStreams = tool[rtpStreamsIn, page[streamRow]]{
	name:  "rtp_streams",
	reads: readsMedia,
	desc:  "RTP and SRTP streams (per SSRC and address pair), oldest first: packets, loss, jitter, E-model MOS (null when not grounded), srtp keying and whether its payload was read. Filters: call_id, orphaned, max_mos, min_loss_pct, codec. Paged.",
	hints: readOnly(),
	ids:   []string{"stream_id"},
	text:  []textSource{textSIP},
	run: func(c *call, in rtpStreamsIn) (page[streamRow], error) {
		sn := mediaSnapshot(c, false)
		pg, err := newPager(c, in.Paging)
		if err != nil {
			return page[streamRow]{}, err
		}
		f, rows := in.filter(), []streamRow{}
		for _, s := range sn.Streams { // creation order: Seq ascending, never reused
			if f.Match(s) && pg.offer(key1(s.Seq)) {
				rows = append(rows, streamRowOf(s))
			}
		}
		return page[streamRow]{Items: rows, Page: pg.page()}, nil
	},
}

type rtpStatsIn struct {
	StreamID string    `json:"stream_id,omitempty" jsonschema:"one stream, src>dst/SSRC; or call_id"`
	CallID   callIDArg `json:"call_id,omitempty" jsonschema:"every stream of a call; or stream_id"`
}

type rtpStatsOut struct {
	Streams []streamRow `json:"streams"`
	// EndpointReported holds RTCP SR/RR the endpoints sent about these
	// streams, as they said it; it never feeds the measured figures.
	EndpointReported []reportRow `json:"endpoint_reported"`
	IntervalSeconds  float64     `json:"interval_seconds" jsonschema:"length of each entry of intervals"`
}

var rtpStats = tool[rtpStatsIn, rtpStatsOut]{
	name:  "rtp_stats",
	reads: readsMedia,
	desc:  "Full figures of one stream or of every stream of a call: per-interval loss, jitter and MOS, payload types, and the RTCP reports the endpoints sent (never merged into the measurements).",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in rtpStatsIn) (rtpStatsOut, error) {
		if (in.StreamID == "") == (in.CallID == "") {
			return rtpStatsOut{}, argErr("stream_id", "rtp_streams lists stream_id values; a stream is src>dst/SSRC", "give exactly one of stream_id and call_id")
		}
		sn := mediaSnapshot(c, true)
		out := rtpStatsOut{IntervalSeconds: rtp.DefaultInterval.Seconds()}
		if c.d.MediaInterval > 0 {
			out.IntervalSeconds = c.d.MediaInterval.Seconds()
		}
		var streams []rtp.StreamView
		if in.StreamID != "" {
			s, found := sn.Stream(in.StreamID)
			if !found {
				return rtpStatsOut{}, notFound("rtp_streams lists stream_id values; a stream is src>dst/SSRC", "no stream %q", in.StreamID)
			}
			streams = append(streams, s)
		} else {
			streams = sn.ForCall(string(in.CallID))
			if len(streams) == 0 {
				return rtpStatsOut{}, notFound("media_diagnostics says why a call has no media", "no RTP streams for Call-ID %q", in.CallID)
			}
		}
		out.Streams, out.EndpointReported = streamRows(streams), reportRows(sn.ReportsAbout(streams))
		if n := sn.Stats.SRTCPUnread; n > 0 {
			c.warnf("%d RTCP packets of SRTP media (SRTCP, encrypted) were counted, not parsed: endpoint_reported holds no report of SRTP calls", n)
		}
		for i := range out.Streams {
			out.Streams[i].Intervals = nonNil(out.Streams[i].Intervals)
		}
		return out, nil
	},
}

type diagnosticsIn struct {
	CallID callIDArg `json:"call_id,omitempty" jsonschema:"omit for orphan streams"`
}

var mediaDiagnostics = tool[diagnosticsIn, diagnosisOut]{
	name:  "media_diagnostics",
	reads: readsMedia,
	desc:  "A call's media against its SDP: applicable (false with a reason) and findings, never an empty list for fine. Without call_id: orphan streams.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in diagnosticsIn) (diagnosisOut, error) {
		sn := mediaSnapshot(c, false)
		if in.CallID != "" {
			return diagnosisOutOf(sn.Diagnose(string(in.CallID))), nil
		}
		return diagnosisOutOf(sn.DiagnoseOrphans()), nil
	},
}

type codecIn struct {
	CallID callIDArg `json:"call_id"`
}

var codecNegotiation = tool[codecIn, negotiationOut]{
	name:  "check_codec_negotiation",
	reads: readsSIP | readsMedia,
	desc:  "A call's SDP offers and answers, the codecs both accepted, what flowed, and a verdict with its reason.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in codecIn) (negotiationOut, error) {
		sn := mediaSnapshot(c, false)
		return negotiationOutOf(sn.Negotiate(string(in.CallID))), nil
	},
}

type dtmfIn struct {
	CallID callIDArg `json:"call_id,omitempty" jsonschema:"omit for every call"`
	Paging
	Projection
}

var dtmfEvents = tool[dtmfIn, page[dtmfRow]]{
	name:  "dtmf_events",
	reads: readsMedia,
	desc:  "DTMF digits in time order (RFC 4733 with repeats folded, SRTP ones once decrypted with the call's SDES key, and SIP INFO), per call or all; warns when SRTP events need keys. Paged.",
	hints: readOnly(),
	ids:   []string{"seq"},
	run: func(c *call, in dtmfIn) (page[dtmfRow], error) {
		sn := mediaSnapshot(c, false)
		if n := sn.Stats.EventsOverwrote; n > 0 {
			c.warnf("%d older events were overwritten at the analyser's event bound and are not listed", n)
		}
		// SRTP events whose payload needed a key the box did not have are
		// said, not read as noise.
		var streams, packets uint64
		for _, s := range sn.Streams {
			if s.SRTP != nil && s.SRTP.EventsUnread > 0 && (in.CallID == "" || s.CallID == string(in.CallID)) {
				streams++
				packets += s.SRTP.EventsUnread
			}
		}
		if streams > 0 {
			c.warnf("%d SRTP streams carried %d RFC 4733 event packets whose payload needs keys the box does not have: their digits are not listed (rtp_streams' srtp says why per stream; SDES keys are read from SDP the box sees in clear)", streams, packets)
		}
		rows := []dtmfRow{}
		for _, e := range sn.Events {
			if in.CallID == "" || e.CallID == string(in.CallID) {
				rows = append(rows, dtmfRowOf(e))
			}
		}
		return pageSlice(c, in.Paging, rows, func(r dtmfRow) rowKey { return r.key })
	},
}
