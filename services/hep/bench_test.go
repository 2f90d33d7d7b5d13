package hep

import (
	"net/netip"
	"testing"

	"fieldtap/services/sip"
)

// BenchmarkMessage is the cost the SPAN analyser pays per SIP message
// with HEP on: encode and queue (a drain keeps the queue from filling).
func BenchmarkMessage(b *testing.B) {
	exp, err := New(Options{Collector: "127.0.0.1:9", CaptureID: 2001})
	if err != nil {
		b.Fatal(err)
	}
	msg := []byte("INVITE sip:bob@198.51.100.2 SIP/2.0\r\nVia: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK776asdhds\r\n" +
		"From: <sip:alice@192.0.2.1>;tag=1928301774\r\nTo: <sip:bob@198.51.100.2>\r\nCall-ID: a84b4c76e66710@192.0.2.1\r\n" +
		"CSeq: 314159 INVITE\r\nContact: <sip:alice@192.0.2.1>\r\nContent-Length: 0\r\n\r\n")
	meta := sip.Meta{Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("198.51.100.2:5060"), Transport: sip.TransportUDP}
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		exp.Message(meta, msg)
		exp.qBytes.Add(-int64(len(<-exp.q)))
	}
}
