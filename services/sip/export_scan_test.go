package sip

import (
	"net/netip"
	"testing"
	"time"

	"fieldtap/services/netdecode"
)

func TestMergeWindows(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	flow := func(a, b int) MediaFlow { return MediaFlow{First: at(a), Last: at(b)} }
	cases := []struct {
		name  string
		flows []MediaFlow
		want  []window
	}{
		{name: "none", flows: nil, want: nil},
		{name: "disjoint, out of order", flows: []MediaFlow{flow(10, 20), flow(0, 5)}, want: []window{{at(0), at(5)}, {at(10), at(20)}}},
		{name: "overlapping", flows: []MediaFlow{flow(0, 10), flow(5, 8), flow(9, 15)}, want: []window{{at(0), at(15)}}},
		{name: "touching", flows: []MediaFlow{flow(0, 5), flow(5, 6)}, want: []window{{at(0), at(6)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeWindows(tc.flows)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if !got[i].from.Equal(tc.want[i].from) || !got[i].to.Equal(tc.want[i].to) {
					t.Errorf("window %d: got %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestMediaScanMatch: a datagram belongs to a flow only on its address
// pair and within its window; on a muxed pair RTCP goes to the RTCP flow.
func TestMediaScanMatch(t *testing.T) {
	a, b := netip.MustParseAddrPort("192.0.2.1:4000"), netip.MustParseAddrPort("192.0.2.2:5000")
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	rtpPayload := []byte{0x80, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}
	rtcpPayload := []byte{0x81, 201, 0, 1, 0, 0, 0, 1}
	flows := []MediaFlow{
		{Src: a, Dst: b, First: at(10), Last: at(20), Packets: 1},
		{Src: a, Dst: b, RTCP: true, First: at(10), Last: at(20), Packets: 1},
	}
	cases := []struct {
		name      string
		d         netdecode.Datagram
		rtp, rtcp int
	}{
		{name: "RTP in window", d: netdecode.Datagram{Time: at(15), Src: a, Dst: b, Payload: rtpPayload}, rtp: 1},
		{name: "muxed RTCP in window", d: netdecode.Datagram{Time: at(15), Src: a, Dst: b, Payload: rtcpPayload}, rtcp: 1},
		{name: "window edges are inside", d: netdecode.Datagram{Time: at(20), Src: a, Dst: b, Payload: rtpPayload}, rtp: 1},
		{name: "same pair after the call", d: netdecode.Datagram{Time: at(21), Src: a, Dst: b, Payload: rtpPayload}},
		{name: "reverse pair", d: netdecode.Datagram{Time: at(15), Src: b, Dst: a, Payload: rtpPayload}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var res ExportResult
			m := newMediaScan(flows, map[FrameRef]bool{}, &res)
			m.port = "p"
			m.UDP(tc.d)
			if res.RTPFrames != tc.rtp || res.RTCPFrames != tc.rtcp {
				t.Errorf("rtp %d rtcp %d, want %d and %d", res.RTPFrames, res.RTCPFrames, tc.rtp, tc.rtcp)
			}
		})
	}
}
