package hep

import (
	"encoding/json"

	"fieldtap/services/rtp"
)

// rtcpJSON is one SR or RR in the JSON HOMER stores for HEP type 5
// (the keys heplify and HOMER's RTCP views read).
type rtcpJSON struct {
	Sender       *senderInfo `json:"sender_information,omitempty"`
	SSRC         uint32      `json:"ssrc"`
	Type         uint8       `json:"type"`
	ReportCount  int         `json:"report_count"`
	ReportBlocks []blockJSON `json:"report_blocks"`
}

type senderInfo struct {
	NTPSec  uint32 `json:"ntp_timestamp_sec"`
	NTPFrac uint32 `json:"ntp_timestamp_usec"`
	RTPTime uint32 `json:"rtp_timestamp"`
	Packets uint32 `json:"packets"`
	Octets  uint32 `json:"octets"`
}

type blockJSON struct {
	SourceSSRC   uint32 `json:"source_ssrc"`
	FractionLost uint8  `json:"fraction_lost"`
	PacketsLost  int32  `json:"packets_lost"`
	HighestSeq   uint32 `json:"highest_seq_no"`
	Jitter       uint32 `json:"ia_jitter"`
	LSR          uint32 `json:"lsr"`
	DLSR         uint32 `json:"dlsr"`
}

// RTCP packet types (RFC 3550 §12.1).
const (
	rtcpSR = 200
	rtcpRR = 201
)

// RTCPJSON encodes one parsed report as HOMER's RTCP JSON.
func RTCPJSON(r rtp.Report) ([]byte, error) {
	j := rtcpJSON{SSRC: r.SenderSSRC, Type: rtcpRR, ReportCount: len(r.Blocks), ReportBlocks: []blockJSON{}}
	if r.Type == "SR" {
		j.Type = rtcpSR
		j.Sender = &senderInfo{NTPSec: uint32(r.NTP >> 32), NTPFrac: uint32(r.NTP), RTPTime: r.RTPTime,
			Packets: r.PacketCount, Octets: r.OctetCount}
	}
	for _, b := range r.Blocks {
		j.ReportBlocks = append(j.ReportBlocks, blockJSON{SourceSSRC: b.SSRC, FractionLost: b.FractionLost,
			PacketsLost: b.CumulativeLost, HighestSeq: b.HighestSeq, Jitter: b.Jitter, LSR: b.LSR, DLSR: b.DLSR})
	}
	return json.Marshal(j)
}
