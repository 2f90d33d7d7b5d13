package mcp

import "fieldtap/services/audio"

// The rows of export_audio: the files it wrote, each stream's
// rendering with its silences, and what it left out and why.

// audioFileRow is one WAV file written.
type audioFileRow struct {
	Path       string  `json:"path"`
	Bytes      int64   `json:"bytes"`
	SampleRate int     `json:"sample_rate"`
	Channels   int     `json:"channels"`
	DurationS  float64 `json:"duration_s"`
}

// audioGapRow is one stretch of silence put where audio was missing.
type audioGapRow struct {
	At        string  `json:"at" jsonschema:"capture time where the silence starts, on the stream's timeline"`
	OffsetS   float64 `json:"offset_s" jsonschema:"seconds from the file's first sample"`
	DurationS float64 `json:"duration_s"`
	Lost      int     `json:"lost_packets" jsonschema:"packets missing by sequence number within it"`
	Cause     string  `json:"cause" jsonschema:"loss (packets missing by sequence number), no_packets (the timestamps skip with no sequence gap: the sender paused), comfort_noise (the sender sent comfort noise, PT 13)"`
}

// audioStreamRow is one stream (one direction of one SSRC) rendered.
type audioStreamRow struct {
	StreamID string       `json:"stream_id"`
	SSRC     string       `json:"ssrc"`
	Side     string       `json:"side" jsonschema:"caller (left channel of the mix), callee (right), from the call's SDP addresses and first request"`
	Codec    codecName    `json:"codec"`
	File     audioFileRow `json:"file"`
	Start    string       `json:"start" jsonschema:"capture time of the first sample"`
	Packets  int          `json:"packets" jsonschema:"audio and comfort-noise packets placed"`
	// Counters of what did not become audio.
	Lost            int           `json:"lost_packets"`
	Duplicates      int           `json:"duplicates"`
	Overlapped      int           `json:"overlapped" jsonschema:"packets whose timestamps overlapped audio already placed; the overlap was dropped"`
	TimestampJumps  int           `json:"timestamp_jumps" jsonschema:"timestamp restarts, placed by capture time instead"`
	Malformed       int           `json:"malformed"`
	OtherRate       int           `json:"other_rate_packets" jsonschema:"packets of a codec at another sample rate than the stream's first"`
	Unsupported     int           `json:"unsupported_packets" jsonschema:"audio packets of a codec not decoded (PCMU, PCMA and G722 are)"`
	EventPackets    int           `json:"event_packets" jsonschema:"RFC 4733 telephone-event packets (listed in dtmf)"`
	PayloadsMissing int           `json:"payloads_missing" jsonschema:"datagrams the media analyser counted that neither the frame rings nor the recorder hold"`
	SilenceS        float64       `json:"silence_s" jsonschema:"seconds of silence put in place of missing audio, all gaps"`
	Gaps            []audioGapRow `json:"gaps"`
	GapsNotListed   int           `json:"gaps_not_listed" jsonschema:"gaps past the list's bound (1000), counted in silence_s"`
	SRTP            bool          `json:"srtp" jsonschema:"the stream is SRTP, decrypted with an SDES key its call's SDP offered"`
	SRTPAuthFailed  int           `json:"srtp_auth_failed" jsonschema:"SRTP packets whose authentication tag did not match the key: left out, as lost"`
	Cut             bool          `json:"cut" jsonschema:"max_seconds ended the stream's file"`
	CutAtS          *float64      `json:"cut_at_s"`
}

// audioSkippedRow is a stream of the call that has no file, and why.
type audioSkippedRow struct {
	StreamID string `json:"stream_id"`
	Reason   string `json:"reason"`
}

func audioGapRows(gs []audio.Gap) []audioGapRow {
	return mapRows(gs, func(g audio.Gap) audioGapRow {
		return audioGapRow{At: ts(g.At), OffsetS: g.Offset.Seconds(), DurationS: g.Duration.Seconds(), Lost: g.Lost, Cause: g.Cause}
	})
}
