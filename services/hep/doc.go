// Package hep exports SIP and RTCP to a HOMER-compatible collector in
// HEP version 3 (EEP) over UDP: wire.AppendHEP encodes one packet, Exporter
// queues packets (bounded, drops counted) and sends them from its own
// goroutine, and Tee hooks the SPAN analyser so a disabled exporter costs
// nothing. RTCP reports go as HOMER's JSON with the call's Call-ID as
// the correlation id, so the collector files them with their call.
package hep
