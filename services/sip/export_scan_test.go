package sip

import (
	"net/netip"
	"testing"
	"time"

	"fieldtap/services/netdecode"
)

func TestMergeWindows(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0) }
	w := func(a, b int) window { return window{at(a), at(b)} }
	cases := []struct {
		name string
		in   []window
		want []window
	}{
		{name: "none", in: nil, want: nil},
		{name: "disjoint, out of order", in: []window{w(10, 20), w(0, 5)}, want: []window{w(0, 5), w(10, 20)}},
		{name: "overlapping", in: []window{w(0, 10), w(5, 8), w(9, 15)}, want: []window{w(0, 15)}},
		{name: "touching", in: []window{w(0, 5), w(5, 6)}, want: []window{w(0, 6)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeWindows(tc.in)
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

// TestMediaMatch: a datagram belongs to a flow only on its address pair
// and within its window; on a muxed pair RTCP goes to the RTCP flow; a
// frame already in the file is not counted again.
func TestMediaMatch(t *testing.T) {
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
		marked    bool // the frame is already in the file
		rtp, rtcp int
	}{
		{name: "RTP in window", d: netdecode.Datagram{Time: at(15), Src: a, Dst: b, Payload: rtpPayload}, rtp: 1},
		{name: "muxed RTCP in window", d: netdecode.Datagram{Time: at(15), Src: a, Dst: b, Payload: rtcpPayload}, rtcp: 1},
		{name: "window edges are inside", d: netdecode.Datagram{Time: at(20), Src: a, Dst: b, Payload: rtpPayload}, rtp: 1},
		{name: "same pair after the call", d: netdecode.Datagram{Time: at(21), Src: a, Dst: b, Payload: rtpPayload}},
		{name: "reverse pair", d: netdecode.Datagram{Time: at(15), Src: b, Dst: a, Payload: rtpPayload}},
		{name: "already in the file", d: netdecode.Datagram{Time: at(15), Src: a, Dst: b, Payload: rtpPayload}, marked: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var res ExportResult
			sc := newExportScan(nil, flows, nil, nil, &res)
			sc.ports = map[string]*portScan{}
			tc.d.Frames = []uint64{7}
			if tc.marked {
				sc.marks[markKey{"p", 7}] = true
			}
			sc.port("p").Datagram(&tc.d)
			if res.RTPFrames != tc.rtp || res.RTCPFrames != tc.rtcp {
				t.Errorf("rtp %d rtcp %d, want %d and %d", res.RTPFrames, res.RTCPFrames, tc.rtp, tc.rtcp)
			}
		})
	}
}
