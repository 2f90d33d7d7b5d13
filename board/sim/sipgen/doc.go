// Package sipgen generates a deterministic, seeded capture of SIP calls with
// RTP media, as a SPAN port beside the calling phones would see it.
//
// Each call is a direct UDP dialog between a phone in 192.0.2.0/24 (on the
// captured segment) and one in 198.51.100.0/24 (behind a router), SIP on port
// 5060, RTP on even ports in [10000, 20000). Calls take their outcomes in
// turn from a fixed mix, shuffled per block so that every block of six calls
// holds:
//
//   - three answered calls: INVITE with an SDP offer (PCMU/0,
//     telephone-event/101), 100 Trying, 180 Ringing, 200 OK with the SDP
//     answer, ACK, bidirectional PCMU RTP (20 ms, 160-byte payloads), then
//     BYE and 200 OK from either side; one of them also sends RFC 4733 DTMF
//     events from the caller;
//   - a busy call: INVITE, 100, 486 Busy Here, ACK;
//   - a wrong number: INVITE, 100, 404 Not Found, ACK;
//   - a cancelled call: INVITE, 100, 180, CANCEL, 200 OK, 487, ACK.
//
// Every call completes inside [Start, Start+Duration): ring and talk times are
// shortened for calls that start late. The same Options always give the same
// bytes, on any GOARCH (no floating point feeds the output).
package sipgen
