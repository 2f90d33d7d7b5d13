package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/rtp"
)

// Tool names in the media bundle.
const (
	toolRTPStreams        = "rtp_streams"
	toolRTPStats          = "rtp_stats"
	toolMediaDiagnostics  = "media_diagnostics"
	toolCodecNegotiation  = "check_codec_negotiation"
	toolDTMFEvents        = "dtmf_events"
	mediaDefaultLimit     = 50
	mediaMaxLimit         = 1000
	codeNoMediaStore      = "NO_MEDIA_STORE"
	codeMediaNotFound     = "NOT_FOUND"
	heuristicOffWarning   = "heuristic RTP detection is off: %d RTP-looking datagrams to or from unsignalled addresses were counted, not tracked"
	mediaStreamIDHint     = "rtp_streams lists stream_id values; a stream is src>dst/ssrc"
	mediaCallNotFoundHint = "list_dialogs shows Call-IDs; rtp_streams shows which calls have media"
)

type rtpStreamsIn struct {
	Projection
	CallID     string   `json:"call_id,omitempty" jsonschema:"only streams of this Call-ID"`
	Orphaned   *bool    `json:"orphaned,omitempty" jsonschema:"true: only streams no dialog signalled (found by heuristic); false: only signalled ones"`
	MaxMOS     *float64 `json:"max_mos,omitempty" jsonschema:"only streams whose MOS is at most this; streams with no grounded MOS never match"`
	MinLossPct *float64 `json:"min_loss_pct,omitempty" jsonschema:"only streams with at least this loss percentage"`
	Codec      string   `json:"codec,omitempty" jsonschema:"only streams whose main codec has this name (case-insensitive), e.g. PCMA"`
	Cursor     string   `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Limit      int      `json:"limit,omitempty" jsonschema:"rows per page, 1..1000 (default 50)"`
}

type rtpStatsIn struct {
	StreamID string `json:"stream_id,omitempty" jsonschema:"one stream (src>dst/ssrc from rtp_streams)"`
	CallID   string `json:"call_id,omitempty" jsonschema:"every stream of one call; give stream_id or call_id"`
}

type rtpStatsOut struct {
	Streams []rtp.StreamView `json:"streams"`
	// EndpointReported holds RTCP SR/RR the endpoints sent about these
	// streams, as they said it; it never feeds the measured figures.
	EndpointReported []rtp.Report `json:"endpoint_reported"`
	IntervalSeconds  float64      `json:"interval_seconds"`
}

type callIn struct {
	CallID string `json:"call_id,omitempty" jsonschema:"the Call-ID; omit for capture-wide findings (orphan streams)"`
}

type codecIn struct {
	CallID string `json:"call_id" jsonschema:"the Call-ID"`
}

type sdpSide struct {
	Time      string   `json:"time"`
	Message   string   `json:"message"`
	Role      string   `json:"role"`
	From      string   `json:"from"`
	Address   string   `json:"media_address"`
	Direction string   `json:"direction"`
	Codecs    []string `json:"codecs" untrusted:"true"`
}

type codecOut struct {
	CallID     string    `json:"call_id"`
	Verdict    string    `json:"verdict"` // ok, no_sdp_in_capture, no_answer, no_common_codec, rejected, unnegotiated_codec_flowed
	Reason     string    `json:"reason"`
	Exchanges  []sdpSide `json:"exchanges"`
	Negotiated []string  `json:"negotiated" untrusted:"true"`
	Flowed     []string  `json:"flowed" untrusted:"true"` // codec names from SDP, as PTView.Codec
}

type dtmfIn struct {
	Projection
	CallID string `json:"call_id,omitempty" jsonschema:"one call's digits; omit for every call"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Limit  int    `json:"limit,omitempty" jsonschema:"rows per page, 1..1000 (default 50)"`
}

type orphansOut struct {
	Applicable bool             `json:"applicable"`
	Findings   []rtp.Finding    `json:"findings"`
	Streams    []rtp.StreamView `json:"streams"`
}

func mediaSnapshot(d Deps, intervals bool) (*rtp.Snapshot, *mcpgo.CallToolResult) {
	if d.Media == nil {
		return nil, fail(d.Source(), codeNoMediaStore, "this box has no media analyser (no Ethernet port)", "check capture_status for ethernet ports")
	}
	return d.Media.Snapshot(intervals), nil
}

func mediaWarnings(sn *rtp.Snapshot) []string {
	var w []string
	if !sn.Stats.Heuristic && sn.Stats.Unsignalled > 0 {
		w = append(w, fmt.Sprintf(heuristicOffWarning, sn.Stats.Unsignalled))
	}
	if sn.Stats.StreamsEvicted > 0 {
		w = append(w, fmt.Sprintf("%d older streams were evicted at the stream limit", sn.Stats.StreamsEvicted))
	}
	return w
}

// mediaCursor is opaque: capture identity and the row's creation order.
func mediaCursor(src SourceInfo, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s|%d", src.CaptureIdentity, seq))
}

func mediaParseCursor(src SourceInfo, c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	id, ok := strings.CutPrefix(string(b), src.CaptureIdentity+"|")
	n, perr := strconv.ParseUint(id, 10, 64)
	if err != nil || !ok || perr != nil {
		return 0, fmt.Errorf("cursor is not one this capture issued")
	}
	return n, nil
}

// pageByOrder pages rows in ascending order; after is exclusive.
func pageByOrder[T any](src SourceInfo, rows []T, order func(T) uint64, cursor string, limit int) ([]T, Page, error) {
	after, err := mediaParseCursor(src, cursor)
	if err != nil {
		return nil, Page{}, err
	}
	out := []T{}
	next := ""
	for _, r := range rows {
		if cursor != "" && order(r) <= after {
			continue
		}
		if len(out) == limit {
			next = mediaCursor(src, order(out[len(out)-1]))
			break
		}
		out = append(out, r)
	}
	return out, Page{Returned: len(out), TotalMatched: len(rows), Truncated: next != "", NextCursor: next}, nil
}

func matchStream(in rtpStreamsIn, s rtp.StreamView) bool {
	switch {
	case in.CallID != "" && s.CallID != in.CallID,
		in.Orphaned != nil && s.Orphaned != *in.Orphaned,
		in.Codec != "" && !strings.EqualFold(in.Codec, s.Codec),
		in.MinLossPct != nil && s.LostPct < *in.MinLossPct,
		in.MaxMOS != nil && (s.Value == nil || *s.Value > *in.MaxMOS):
		return false
	}
	return true
}

func mediaTools(d Deps) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolRTPStreams,
				mcpgo.WithDescription("RTP streams (one row per SSRC and address pair) found from SDP, oldest first, with packets, loss, max jitter and an E-model MOS (null with not_grounded for codecs without published values); filters: call_id, orphaned, max_mos, min_loss_pct, codec; paged: follow next_cursor."),
				inputSchema[rtpStreamsIn](), readOnly(), listOutput[rtp.StreamView]()),
			Handler: listHandler[rtpStreamsIn, rtp.StreamView](d, []string{"stream_id"}, func(ctx context.Context, in rtpStreamsIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := mediaSnapshot(d, false)
				if f != nil {
					return f
				}
				limit, err := sipLimit(in.Limit, mediaDefaultLimit, mediaMaxLimit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "use a smaller page and follow next_cursor")
				}
				var rows []rtp.StreamView
				for _, s := range sn.Streams {
					if matchStream(in, s) {
						rows = append(rows, s)
					}
				}
				out, page, err := pageByOrder(src, rows, func(s rtp.StreamView) uint64 { return s.Seq }, in.Cursor, limit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "start again without a cursor")
				}
				return list(src, out, page, mediaWarnings(sn)...)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolRTPStats,
				mcpgo.WithDescription("Full figures of one stream (stream_id) or of every stream of one call (call_id): totals, duplicates, out-of-order, sequence resets, payload types, per-interval loss/jitter/MOS (5 s), and RTCP reports as the endpoints sent them (endpoint_reported, never merged into the measurements)."),
				inputSchema[rtpStatsIn](), readOnly(), outputSchema[rtpStatsOut]()),
			Handler: handler(d, func(ctx context.Context, in rtpStatsIn) *mcpgo.CallToolResult {
				src := d.Source()
				if (in.StreamID == "") == (in.CallID == "") {
					return fail(src, CodeInvalidArgument, "give exactly one of stream_id or call_id", mediaStreamIDHint)
				}
				sn, f := mediaSnapshot(d, true)
				if f != nil {
					return f
				}
				out := rtpStatsOut{Streams: []rtp.StreamView{}, EndpointReported: []rtp.Report{}}
				if d.MediaInterval > 0 {
					out.IntervalSeconds = d.MediaInterval.Seconds()
				}
				if in.StreamID != "" {
					s, found := sn.Stream(in.StreamID)
					if !found {
						return fail(src, codeMediaNotFound, fmt.Sprintf("no stream %q", in.StreamID), mediaStreamIDHint)
					}
					out.Streams = append(out.Streams, s)
				} else {
					out.Streams = append(out.Streams, sn.ForCall(in.CallID)...)
					if len(out.Streams) == 0 {
						return fail(src, codeMediaNotFound, fmt.Sprintf("no RTP streams for Call-ID %q", in.CallID), "media_diagnostics says why a call has no media")
					}
				}
				out.EndpointReported = reportsFor(sn, out.Streams)
				return ok(src, out, mediaWarnings(sn)...)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolMediaDiagnostics,
				mcpgo.WithDescription("What a call's media did against what its SDP negotiated: applicable (false with a reason when there was nothing to judge) and findings (no_media, one_way_media, asymmetric_loss, unsignalled_address, packet_loss, poor_mos, or no_problem_found); never an empty list standing for fine. Without call_id: capture-wide orphan streams."),
				inputSchema[callIn](), readOnly(), outputSchema[rtp.Diagnosis]()),
			Handler: handler(d, func(ctx context.Context, in callIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := mediaSnapshot(d, false)
				if f != nil {
					return f
				}
				if in.CallID == "" {
					orph := sn.Orphans()
					dg := rtp.Diagnosis{Applicable: sn.Stats.Heuristic, Findings: []rtp.Finding{}, Streams: orph}
					switch {
					case !sn.Stats.Heuristic:
						dg.Reason = "orphan streams are only found with heuristic RTP detection, which is off"
					case len(orph) > 0:
						dg.Findings = append(dg.Findings, rtp.Finding{Code: rtp.FindingOrphans, Severity: "warning", Streams: streamIDs(orph),
							Message: fmt.Sprintf("%d RTP streams no SIP dialog signalled", len(orph))})
					default:
						dg.Findings = append(dg.Findings, rtp.Finding{Code: rtp.FindingNoneDetected, Severity: "info", Streams: []string{},
							Message: "every RTP stream found belongs to a signalled call"})
					}
					return ok(src, dg, mediaWarnings(sn)...)
				}
				return ok(src, sn.Diagnose(in.CallID), mediaWarnings(sn)...)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolCodecNegotiation,
				mcpgo.WithDescription("A call's SDP offers and answers in order (codecs, direction, media address), the codecs both sides accepted, and what actually flowed; verdict ok, no_sdp_in_capture, no_answer, rejected, no_common_codec or unnegotiated_codec_flowed."),
				inputSchema[codecIn](), readOnly(), outputSchema[codecOut]()),
			Handler: handler(d, func(ctx context.Context, in codecIn) *mcpgo.CallToolResult {
				src := d.Source()
				if in.CallID == "" {
					return fail(src, CodeInvalidArgument, "call_id is required", mediaCallNotFoundHint)
				}
				sn, f := mediaSnapshot(d, false)
				if f != nil {
					return f
				}
				return ok(src, negotiation(sn, in.CallID))
			}),
		},
		{
			Tool: mcpgo.NewTool(toolDTMFEvents,
				mcpgo.WithDescription("DTMF digits in time order: RFC 4733 telephone-events (repeated end packets de-duplicated; end_repeats counts them) and SIP INFO (application/dtmf-relay, application/dtmf); each with digit, method, time. call_id narrows to one call; paged."),
				inputSchema[dtmfIn](), readOnly(), listOutput[rtp.Event]()),
			Handler: listHandler[dtmfIn, rtp.Event](d, []string{"call_id", "time"}, func(ctx context.Context, in dtmfIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := mediaSnapshot(d, false)
				if f != nil {
					return f
				}
				limit, err := sipLimit(in.Limit, mediaDefaultLimit, mediaMaxLimit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "use a smaller page and follow next_cursor")
				}
				type indexed struct {
					i uint64
					e rtp.Event
				}
				var rows []indexed
				for i, e := range sn.Events {
					if in.CallID == "" || e.CallID == in.CallID {
						rows = append(rows, indexed{uint64(i + 1), e})
					}
				}
				page, pg, err := pageByOrder(src, rows, func(r indexed) uint64 { return r.i }, in.Cursor, limit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "start again without a cursor")
				}
				out := make([]rtp.Event, len(page))
				for i, r := range page {
					out[i] = r.e
				}
				return list(src, out, pg, mediaWarnings(sn)...)
			}),
		},
	}
}

func streamIDs(ss []rtp.StreamView) []string {
	out := []string{}
	for _, s := range ss {
		out = append(out, s.ID)
	}
	return out
}

// reportsFor picks RTCP reports about ss: SRs their senders sent and
// report blocks naming their SSRCs.
func reportsFor(sn *rtp.Snapshot, ss []rtp.StreamView) []rtp.Report {
	ssrcs := map[uint32]bool{}
	for _, s := range ss {
		ssrcs[s.Key.SSRC] = true
	}
	out := []rtp.Report{}
	for _, r := range sn.Reports {
		hit := ssrcs[r.SenderSSRC]
		for _, b := range r.Blocks {
			hit = hit || ssrcs[b.SSRC]
		}
		if hit {
			out = append(out, r)
		}
	}
	return out
}

// negotiation compares a call's offers, answers and flowing codecs.
func negotiation(sn *rtp.Snapshot, callID string) codecOut {
	out := codecOut{CallID: callID, Exchanges: []sdpSide{}, Negotiated: []string{}, Flowed: []string{}}
	dv := sn.Dialogs[callID]
	flowed := map[string]bool{}
	for _, s := range sn.ForCall(callID) {
		for _, p := range s.PayloadTypes {
			flowed[p.Codec] = true
		}
	}
	for c := range flowed {
		out.Flowed = append(out.Flowed, c)
	}
	sort.Strings(out.Flowed)
	if dv == nil || len(dv.SDP) == 0 {
		out.Verdict, out.Reason = "no_sdp_in_capture", "no SDP body for this Call-ID reached the capture point"
		return out
	}
	var offer, answer map[string]bool
	rejected := false
	for _, e := range dv.SDP {
		side := sdpSide{Time: ts(e.Time), Message: e.Message, Role: e.Role, From: e.From.String(), Codecs: []string{}}
		codecs := map[string]bool{}
		for _, m := range e.Session.Media {
			if m.Type != "audio" {
				continue
			}
			if a, ok := m.Addr(); ok {
				side.Address = a.String()
			} else if e.Role == rtp.RoleAnswer {
				rejected = true
			}
			side.Direction = m.Direction
			for _, fm := range m.Formats {
				name := fm.Encoding
				if name == "" {
					name = "PT" + strconv.Itoa(fm.PT)
				}
				side.Codecs = append(side.Codecs, name)
				codecs[strings.ToUpper(name)] = true
			}
		}
		if e.Role == rtp.RoleOffer {
			offer, answer = codecs, nil
		} else {
			answer = codecs
		}
		out.Exchanges = append(out.Exchanges, side)
	}
	for c := range answer {
		if offer[c] {
			out.Negotiated = append(out.Negotiated, c)
		}
	}
	sort.Strings(out.Negotiated)
	switch {
	case answer == nil && dv.FinalCode >= 300:
		out.Verdict, out.Reason = "rejected", fmt.Sprintf("the offer was refused with %d", dv.FinalCode)
	case answer == nil:
		out.Verdict, out.Reason = "no_answer", "an offer was seen but no answer to it"
	case rejected:
		out.Verdict, out.Reason = "rejected", "the answer set the audio port to 0"
	case len(out.Negotiated) == 0:
		out.Verdict, out.Reason = "no_common_codec", "offer and answer share no codec"
	default:
		out.Verdict, out.Reason = "ok", "offer and answer share a codec"
		for c := range flowed {
			if !answer[strings.ToUpper(c)] && !offer[strings.ToUpper(c)] {
				out.Verdict, out.Reason = "unnegotiated_codec_flowed", "media carried "+c+", which no SDP of this call listed"
			}
		}
	}
	return out
}
