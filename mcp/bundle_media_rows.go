package mcp

import (
	"fmt"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/rtp"
)

// The rows of the media bundle, built from the analyser's plain values:
// one streamRow for rtp_streams, rtp_stats and media_diagnostics, and the
// codec names of every media answer as codecName.

// codecName is a payload type's encoding name as answers show it
// (docs/media.md): a name the box's own tables know, or its PT<n> label,
// is its vocabulary and written bare as rtp.Codec.Own spells it; any
// other name came only from an SDP body, so the sender wrote it, and it
// is fenced.
type codecName string

// MarshalText writes the box's own name bare and any other fenced.
func (c codecName) MarshalText() ([]byte, error) {
	if own, ok := rtp.Codec(c).Own(); ok {
		return []byte(own), nil
	}
	return untrusted.Text(c).MarshalText()
}

func codecNames(cs []rtp.Codec) []codecName {
	out := make([]codecName, len(cs))
	for i, c := range cs {
		out[i] = codecName(c)
	}
	return out
}

// mosRow is an E-model estimate, or the reason it is null (rtp.MOS).
type mosRow struct {
	Value    *float64 `json:"mos"`
	R        *float64 `json:"r_factor"`
	Grounded bool     `json:"mos_grounded"`
	Reason   string   `json:"mos_reason,omitempty"`
	Basis    string   `json:"mos_basis,omitempty"`
}

func mosRowOf(m rtp.MOS) mosRow {
	return mosRow{Value: m.Value, R: m.R, Grounded: m.Grounded, Reason: m.Reason, Basis: m.Basis}
}

// payloadTypeRow is one payload type seen on a stream.
type payloadTypeRow struct {
	PT      uint8     `json:"pt"`
	Codec   codecName `json:"codec"`
	Packets uint64    `json:"packets"`
}

// intervalRow is one interval of a stream with its own loss and MOS.
type intervalRow struct {
	Start        string  `json:"start"`
	LostPct      float64 `json:"lost_pct"`
	Packets      uint64  `json:"packets"`
	Expected     int64   `json:"expected"`
	Lost         int64   `json:"lost"`
	MaxJitterMs  float64 `json:"max_jitter_ms"`
	MeanJitterMs float64 `json:"mean_jitter_ms"`
	MaxDeltaMs   float64 `json:"max_delta_ms"`
	mosRow
}

func intervalRowOf(v rtp.IntervalView) intervalRow {
	return intervalRow{Start: ts(v.Start), LostPct: v.LostPct, Packets: v.Packets, Expected: v.Expected, Lost: v.Lost,
		MaxJitterMs: v.MaxJitter, MeanJitterMs: v.MeanJitter, MaxDeltaMs: v.MaxDelta, mosRow: mosRowOf(v.MOS)}
}

// streamRow is one RTP stream. Its id, SSRC and addresses are
// identifiers (bare); a codec name is fenced when only the SDP gives it.
type streamRow struct {
	ID           string           `json:"stream_id"`
	SSRC         string           `json:"ssrc"`
	Src          string           `json:"src"`
	Dst          string           `json:"dst"`
	CallID       string           `json:"call_id"`
	Orphaned     bool             `json:"orphaned"`
	Codec        codecName        `json:"codec"`
	ClockRate    int              `json:"clock_rate"`
	PayloadTypes []payloadTypeRow `json:"payload_types"`
	First        string           `json:"first"`
	Last         string           `json:"last"`
	Packets      uint64           `json:"packets"`
	Expected     int64            `json:"expected"`
	Lost         int64            `json:"lost"`
	LostPct      float64          `json:"lost_pct"`
	Duplicates   uint64           `json:"duplicates"`
	OutOfOrder   uint64           `json:"out_of_order"`
	SeqResets    uint64           `json:"sequence_resets"`
	Markers      uint64           `json:"markers"`
	MaxJitterMs  float64          `json:"max_jitter_ms"`
	MeanJitterMs float64          `json:"mean_jitter_ms"`
	MaxDeltaMs   float64          `json:"max_delta_ms"`
	TimingEpochs uint64           `json:"timing_epochs"`
	mosRow
	// Intervals are there only when the snapshot copied them (rtp_stats).
	Intervals        []intervalRow `json:"intervals,omitempty"`
	IntervalsDropped uint64        `json:"intervals_dropped,omitempty"`
	PTOverflow       uint64        `json:"payload_types_overflow,omitempty"`
	SRTP             *srtpRow      `json:"srtp" jsonschema:"null for RTP (or a stream no SDP announced)"`
}

// srtpRow is what the box knows of an SRTP stream (rtp.SRTPView): how its
// SDP keyed it and whether the payload could be read. Loss, jitter and
// MOS come from the clear RTP header either way.
type srtpRow struct {
	Keying        string `json:"keying" jsonschema:"sdes (a=crypto), dtls (DTLS-SRTP fingerprint) or unknown (RTP/SAVP with neither)"`
	Payload       string `json:"payload" jsonschema:"decrypted: an a=crypto key of the call authenticated the packets; needs_keys: no key the box can use; keys_failed: the offered keys did not authenticate them"`
	Reason        string `json:"reason,omitempty" jsonschema:"why the payload was not read"`
	Authenticated uint64 `json:"authenticated" jsonschema:"packets the key authenticated (telephone-events among them decrypted and read)"`
	AuthFailures  uint64 `json:"auth_failures" jsonschema:"packets whose tag did not match the stream's key"`
	Unread        uint64 `json:"unread" jsonschema:"packets whose payload was not read"`
	EventsUnread  uint64 `json:"events_unread" jsonschema:"telephone-event packets among unread: digits dtmf_events cannot list"`
}

func srtpRowOf(v *rtp.SRTPView) *srtpRow {
	if v == nil {
		return nil
	}
	return &srtpRow{Keying: v.Keying, Payload: v.Payload, Reason: v.Reason, Authenticated: v.Authenticated, AuthFailures: v.AuthFailures,
		Unread: v.Unread, EventsUnread: v.EventsUnread}
}

func streamRowOf(s rtp.StreamView) streamRow {
	r := streamRow{ID: s.ID, SSRC: s.SSRC, Src: s.Src, Dst: s.Dst, CallID: s.CallID, Orphaned: s.Orphaned, Codec: codecName(s.Codec),
		ClockRate: s.ClockRate, PayloadTypes: make([]payloadTypeRow, len(s.PayloadTypes)), First: ts(s.First), Last: ts(s.Last),
		Packets: s.Packets, Expected: s.Expected, Lost: s.Lost, LostPct: s.LostPct, Duplicates: s.Duplicates, OutOfOrder: s.OutOfOrder,
		SeqResets: s.SeqResets, Markers: s.Markers, MaxJitterMs: s.MaxJitterMs, MeanJitterMs: s.MeanJitterMs, MaxDeltaMs: s.MaxDeltaMs,
		TimingEpochs: s.TimingEpochs, mosRow: mosRowOf(s.MOS), IntervalsDropped: s.IntervalsDropped, PTOverflow: s.PTOverflow, SRTP: srtpRowOf(s.SRTP)}
	for i, p := range s.PayloadTypes {
		r.PayloadTypes[i] = payloadTypeRow{PT: p.PT, Codec: codecName(p.Codec), Packets: p.Packets}
	}
	r.Intervals = mapRows(s.Intervals, intervalRowOf)
	return r
}

func streamRows(ss []rtp.StreamView) []streamRow {
	out := make([]streamRow, len(ss))
	for i, s := range ss {
		out[i] = streamRowOf(s)
	}
	return out
}

// reportRow is one RTCP SR or RR as the endpoint sent it, its SSRCs in
// the one hex spelling of the stream ids.
type reportRow struct {
	Time        string           `json:"time"`
	Src         string           `json:"src"`
	Dst         string           `json:"dst"`
	Type        string           `json:"type" jsonschema:"SR or RR"`
	SenderSSRC  string           `json:"sender_ssrc"`
	NTP         uint64           `json:"ntp,omitempty" jsonschema:"SR: the sender's NTP timestamp"`
	RTPTime     uint32           `json:"rtp_time,omitempty"`
	PacketCount uint32           `json:"packet_count,omitempty"`
	OctetCount  uint32           `json:"octet_count,omitempty"`
	Blocks      []reportBlockRow `json:"blocks"`
	// BlocksDropped counts report blocks past the analyser's bound.
	BlocksDropped int `json:"blocks_dropped,omitempty"`
}

type reportBlockRow struct {
	SSRC           string `json:"ssrc" jsonschema:"the stream reported on"`
	FractionLost   uint8  `json:"fraction_lost" jsonschema:"in 1/256 since the last report"`
	CumulativeLost int32  `json:"cumulative_lost"`
	HighestSeq     uint32 `json:"highest_seq" jsonschema:"extended highest sequence number received"`
	Jitter         uint32 `json:"jitter" jsonschema:"RTP timestamp units"`
	LSR            uint32 `json:"lsr"`
	DLSR           uint32 `json:"dlsr" jsonschema:"1/65536 s"`
}

func ssrcHex(v uint32) string { return fmt.Sprintf("%08X", v) }

func reportRowOf(r rtp.Report) reportRow {
	row := reportRow{Time: ts(r.Time), Src: r.Src.String(), Dst: r.Dst.String(), Type: r.Type, SenderSSRC: ssrcHex(r.SenderSSRC),
		NTP: r.NTP, RTPTime: r.RTPTime, PacketCount: r.PacketCount, OctetCount: r.OctetCount, Blocks: make([]reportBlockRow, len(r.Blocks)), BlocksDropped: r.BlocksDropped}
	for i, b := range r.Blocks {
		row.Blocks[i] = reportBlockRow{SSRC: ssrcHex(b.SSRC), FractionLost: b.FractionLost, CumulativeLost: b.CumulativeLost,
			HighestSeq: b.HighestSeq, Jitter: b.Jitter, LSR: b.LSR, DLSR: b.DLSR}
	}
	return row
}

func reportRows(rs []rtp.Report) []reportRow {
	out := make([]reportRow, len(rs))
	for i, r := range rs {
		out[i] = reportRowOf(r)
	}
	return out
}

// diagnosisOut is media_diagnostics' answer (rtp.Diagnosis): the
// findings are the box's own words.
type diagnosisOut struct {
	CallID     string            `json:"call_id"`
	Applicable bool              `json:"applicable"`
	Reason     string            `json:"reason,omitempty"`
	Findings   []mediaFindingRow `json:"findings"`
	Streams    []streamRow       `json:"streams"`
}

type mediaFindingRow struct {
	Code     string   `json:"code"`
	Severity string   `json:"severity"`
	Message  string   `json:"message"`
	Streams  []string `json:"streams"`
}

func diagnosisOutOf(d rtp.Diagnosis) diagnosisOut {
	out := diagnosisOut{CallID: d.CallID, Applicable: d.Applicable, Reason: d.Reason, Findings: make([]mediaFindingRow, len(d.Findings)),
		Streams: streamRows(d.Streams)}
	for i, f := range d.Findings {
		out.Findings[i] = mediaFindingRow{Code: f.Code, Severity: f.Severity, Message: f.Message, Streams: f.Streams}
	}
	return out
}

// negotiationOut is check_codec_negotiation's answer (rtp.Negotiation).
type negotiationOut struct {
	CallID     string           `json:"call_id"`
	Verdict    string           `json:"verdict"`
	Reason     string           `json:"reason"`
	Exchanges  []sdpExchangeRow `json:"exchanges"`
	Negotiated []codecName      `json:"negotiated"`
	Flowed     []codecName      `json:"flowed"`
}

// sdpExchangeRow is one SDP body of the offer/answer exchange: its audio
// line only (rtp.SDPSide).
type sdpExchangeRow struct {
	Time      string      `json:"time"`
	Message   string      `json:"message"`
	Role      string      `json:"role"`
	From      string      `json:"from"`
	Address   *string     `json:"media_address"`
	Direction string      `json:"direction"`
	Codecs    []codecName `json:"codecs"`
}

func negotiationOutOf(n rtp.Negotiation) negotiationOut {
	out := negotiationOut{CallID: n.CallID, Verdict: n.Verdict, Reason: n.Reason, Exchanges: make([]sdpExchangeRow, len(n.Exchanges)),
		Negotiated: codecNames(n.Negotiated), Flowed: codecNames(n.Flowed)}
	for i, e := range n.Exchanges {
		out.Exchanges[i] = sdpExchangeRow{Time: ts(e.Time), Message: e.Message, Role: e.Role, From: e.From, Address: e.Address,
			Direction: e.Direction, Codecs: codecNames(e.Codecs)}
	}
	return out
}

// dtmfRow is one DTMF digit (rtp.Event).
type dtmfRow struct {
	Seq        uint64   `json:"seq"`
	Time       string   `json:"time"`
	CallID     string   `json:"call_id"`
	Digit      string   `json:"digit"`
	Method     string   `json:"method"`
	DurationMs *float64 `json:"duration_ms"`
	Stream     string   `json:"stream_id,omitempty"`
	EndSeen    bool     `json:"end_seen"`
	EndRepeats int      `json:"end_repeats"`
	// key pages by time, then publication order: events sharing a time
	// are neither lost nor repeated.
	key rowKey
}

func dtmfRowOf(e rtp.Event) dtmfRow {
	return dtmfRow{Seq: e.Seq, Time: ts(e.Time), CallID: e.CallID, Digit: e.Digit, Method: e.Method, DurationMs: e.DurationMs,
		Stream: e.Stream, EndSeen: e.EndSeen, EndRepeats: e.EndRepeats, key: rowKey{uint64(max(e.Time.UnixNano(), 0)), e.Seq}}
}
