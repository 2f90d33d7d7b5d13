// Package rtp measures RTP media on a SPAN port: streams found from the
// SDP that SIP dialogs carry (or, when enabled, by heuristic), their loss,
// jitter, delta and payload types, per-interval figures, RTCP reports as
// the endpoints sent them, an E-model MOS, DTMF (RFC 4733 and SIP INFO)
// and per-dialog findings such as one-way audio.
//
// SRTP streams (the SDP says so: a=crypto, a=fingerprint, RTP/SAVP) are
// measured from their clear headers like RTP; their payload, which only
// RFC 4733 events need, is read when an SDES key of the call authenticates
// the packets (services/srtp), and otherwise counted as unread. SRTCP is
// counted, not parsed.
//
// An Analyser is fed by the SIP analyser through sip.MediaHook on the
// port's consumer goroutine; Snapshot may be called from any goroutine.
//
// Definitions follow tshark 4.0 (ui/tap-rtp-analysis.c) where a number is
// compared with it: jitter is RFC 3550 §6.4.1's interarrival jitter in ms
// using the payload type's clock rate, updated on every packet with a
// known clock, and its maximum and the maximum delta are taken over
// "regular" packets only (not the first, not marked, not comfort noise
// or just after it, not earlier in RTP time than the last in-order one).
// Unlike tshark, lost is never negative: duplicates are counted apart.
//
// A stream is keyed by SSRC and both addresses, because some endpoints
// reuse one SSRC in both directions. Every table keyed by a value a
// sender chooses (streams, signalled addresses, dialogs, events, reports)
// is bounded; what does not fit is counted.
package rtp
