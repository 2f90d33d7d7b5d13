package hepin

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
)

// RTCP packet types (RFC 3550 §12.1) and the most report blocks one
// packet's 5-bit count can say.
const (
	rtcpSR        = 200
	rtcpRR        = 201
	maxRTCPBlocks = 31
)

// isRawRTCP reports whether a type 5 payload is an RTCP packet as sent
// (version 2, a packet type of RFC 3550's range) rather than HOMER's JSON.
func isRawRTCP(b []byte) bool {
	return len(b) >= 8 && b[0]>>6 == 2 && b[1] >= rtcpSR && b[1] <= 207
}

// rtcpJSON is HOMER's RTCP JSON for one SR or RR, as heplify and
// fieldtap's own exporter write it (services/hep/rtcp.go).
type rtcpJSON struct {
	Sender *struct {
		NTPSec  uint32 `json:"ntp_timestamp_sec"`
		NTPFrac uint32 `json:"ntp_timestamp_usec"` // the NTP fraction, under HOMER's name
		RTPTime uint32 `json:"rtp_timestamp"`
		Packets uint32 `json:"packets"`
		Octets  uint32 `json:"octets"`
	} `json:"sender_information"`
	SSRC   uint32 `json:"ssrc"`
	Type   int    `json:"type"`
	Blocks []struct {
		SourceSSRC   uint32 `json:"source_ssrc"`
		FractionLost uint8  `json:"fraction_lost"`
		PacketsLost  int32  `json:"packets_lost"`
		HighestSeq   uint32 `json:"highest_seq_no"`
		Jitter       uint32 `json:"ia_jitter"`
		LSR          uint32 `json:"lsr"`
		DLSR         uint32 `json:"dlsr"`
	} `json:"report_blocks"`
}

// rtcpFromJSON turns HOMER's JSON for one report back into the SR or RR
// packet it describes, for the media analyser.
func rtcpFromJSON(b []byte) ([]byte, error) {
	var j rtcpJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("rtcp json: %w", err)
	}
	if len(j.Blocks) > maxRTCPBlocks {
		return nil, fmt.Errorf("rtcp json: %d report blocks, at most %d", len(j.Blocks), maxRTCPBlocks)
	}
	pt := byte(rtcpRR)
	switch {
	case j.Type == rtcpSR && j.Sender != nil:
		pt = rtcpSR
	case j.Type == rtcpRR:
	default:
		return nil, errors.New("rtcp json: neither an SR with sender information nor an RR")
	}
	words := 1 + 6*len(j.Blocks) // after the first word: the SSRC, then the blocks
	if pt == rtcpSR {
		words += 5
	}
	out := make([]byte, 0, 4*(1+words))
	out = append(out, 0x80|byte(len(j.Blocks)), pt)
	out = binary.BigEndian.AppendUint16(out, uint16(words))
	out = binary.BigEndian.AppendUint32(out, j.SSRC)
	if pt == rtcpSR {
		si := j.Sender
		for _, v := range []uint32{si.NTPSec, si.NTPFrac, si.RTPTime, si.Packets, si.Octets} {
			out = binary.BigEndian.AppendUint32(out, v)
		}
	}
	for _, r := range j.Blocks {
		out = binary.BigEndian.AppendUint32(out, r.SourceSSRC)
		out = binary.BigEndian.AppendUint32(out, uint32(r.FractionLost)<<24|uint32(r.PacketsLost)&0xffffff)
		for _, v := range []uint32{r.HighestSeq, r.Jitter, r.LSR, r.DLSR} {
			out = binary.BigEndian.AppendUint32(out, v)
		}
	}
	return out, nil
}
