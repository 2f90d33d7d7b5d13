package mcp

import (
	"fieldtap/mcp/untrusted"
	"fieldtap/services/trunk"
)

// trunkFlowRow is one TCP flow of trunk_health.
type trunkFlowRow struct {
	Flow          uint64       `json:"flow" jsonschema:"the flow's number, in order of its first segment"`
	Client        string       `json:"client" jsonschema:"address:port of the side that opened the connection"`
	Server        string       `json:"server"`
	ClientFromSYN bool         `json:"client_from_syn" jsonschema:"the sides are known from the SYN; false: the connection was joined mid-stream and the side on a SIP port is taken for the server"`
	First         string       `json:"first"`
	Last          string       `json:"last"`
	IRTTms        *float64     `json:"irtt_ms" jsonschema:"the three-way handshake's round trip; null when the handshake was not seen"`
	FromClient    tcpCountsRow `json:"from_client"`
	FromServer    tcpCountsRow `json:"from_server"`
	Fin           bool         `json:"fin" jsonschema:"a FIN was seen"`
	Reset         bool         `json:"reset" jsonschema:"an RST was seen, from either side"`
	TLS           *trunkTLSRow `json:"tls" jsonschema:"the clear TLS handshake; null for a flow on no SIPS port"`
}

// tcpCountsRow is one side's segment analysis (trunk.TCPCounts).
type tcpCountsRow struct {
	Segments                uint64 `json:"segments"`
	Bytes                   uint64 `json:"bytes" jsonschema:"payload bytes"`
	Retransmissions         uint64 `json:"retransmissions" jsonschema:"tshark's tcp.analysis.retransmission: fast and spurious retransmissions included"`
	FastRetransmissions     uint64 `json:"fast_retransmissions"`
	SpuriousRetransmissions uint64 `json:"spurious_retransmissions" jsonschema:"of those, data the other side had already acknowledged"`
	OutOfOrder              uint64 `json:"out_of_order"`
	ZeroWindows             uint64 `json:"zero_windows" jsonschema:"segments advertising a window of 0 (this side's receive buffer was full)"`
	Resets                  uint64 `json:"resets" jsonschema:"segments with RST"`
}

func tcpCountsRowOf(c trunk.TCPCounts) tcpCountsRow {
	return tcpCountsRow{Segments: c.Segments, Bytes: c.Bytes, Retransmissions: c.Retransmissions, FastRetransmissions: c.FastRetransmissions,
		SpuriousRetransmissions: c.SpuriousRetransmissions, OutOfOrder: c.OutOfOrder, ZeroWindows: c.ZeroWindows, Resets: c.Resets}
}

// trunkTLSRow is what a SIPS flow's clear handshake showed.
type trunkTLSRow struct {
	Outcome     string          `json:"outcome" jsonschema:"completed, alert (an alert before completion), reset (an RST before completion) or incomplete; TLS 1.3 completion is inferred from encrypted records both sides sent after the ServerHello"`
	ClientHello bool            `json:"client_hello"`
	ServerHello bool            `json:"server_hello"`
	HelloRetry  bool            `json:"hello_retry" jsonschema:"the server sent a HelloRetryRequest first"`
	Version     *string         `json:"version" jsonschema:"negotiated (TLS 1.3 from the ServerHello's supported_versions); null without a ServerHello"`
	CipherSuite *string         `json:"cipher_suite" jsonschema:"the ServerHello's, by its IANA name; null without a ServerHello"`
	SNI         *untrusted.Text `json:"sni" jsonschema:"the server name the ClientHello asked for; null when it named none"`
	Alerts      []tlsAlertRow   `json:"alerts" jsonschema:"in the order sent, at most 8"`
	// AlertsDropped are alerts past the eight kept.
	AlertsDropped   uint64      `json:"alerts_dropped"`
	Certificate     *tlsCertRow `json:"certificate" jsonschema:"the server's first certificate from its clear Certificate message (TLS 1.2 and earlier); null with certificate_note saying why"`
	CertificateNote string      `json:"certificate_note,omitempty"`
	Problem         string      `json:"problem,omitempty" jsonschema:"why reading the handshake stopped early (bytes lost, not TLS, a malformed or oversized message)"`
}

// tlsAlertRow is one alert; an alert sent encrypted shows no level or
// description.
type tlsAlertRow struct {
	Time        string  `json:"time"`
	From        string  `json:"from" jsonschema:"client or server"`
	Encrypted   bool    `json:"encrypted" jsonschema:"sent after its side began encrypting: level and description cannot be seen without keys"`
	Level       *string `json:"level" jsonschema:"warning or fatal; null when encrypted"`
	Description *string `json:"description" jsonschema:"RFC 8446 §6 name (handshake_failure, bad_certificate, …); null when encrypted"`
}

// tlsCertRow is the server certificate's names and validity.
type tlsCertRow struct {
	Subject   untrusted.Text `json:"subject" jsonschema:"RFC 2253 order (CN=…,O=…), as openssl x509 -nameopt RFC2253 prints it"`
	Issuer    untrusted.Text `json:"issuer"`
	NotBefore string         `json:"not_before"`
	NotAfter  string         `json:"not_after"`
	// DaysToExpiry counts from the capture time the certificate was seen.
	DaysToExpiry int    `json:"days_to_expiry" jsonschema:"whole days from when the certificate was seen (capture clock) to not_after, rounded down; negative once expired"`
	Expired      bool   `json:"expired" jsonschema:"not_after had passed when it was seen"`
	SeenAt       string `json:"seen_at"`
	Chain        int    `json:"chain" jsonschema:"certificates the server sent"`
}
