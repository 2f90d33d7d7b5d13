package netdecode

import (
	"encoding/binary"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/tools/refdata"

	"fieldtap/drivers/wire"
)

type sink struct {
	udp     []Datagram
	streams map[netip.AddrPort][]byte
	consume func(b []byte) int // nil consumes everything
}

func (s *sink) UDP(d *Datagram) {
	c := *d // the decoder's, for the call
	c.Payload = append([]byte(nil), d.Payload...)
	s.udp = append(s.udp, c)
}

func (s *sink) TCP(st *Stream, _ time.Time, b []byte) int {
	if s.streams == nil {
		s.streams = map[netip.AddrPort][]byte{}
	}
	n := len(b)
	if s.consume != nil {
		n = s.consume(b)
	}
	s.streams[st.Src] = append(s.streams[st.Src], b[:n]...)
	return n
}

var (
	srcIP = netip.MustParseAddr("192.0.2.1")
	dstIP = netip.MustParseAddr("192.0.2.2")
	src6  = netip.MustParseAddr("fd00::1")
	dst6  = netip.MustParseAddr("fd00::2")
)

func udpSeg(payload string) []byte {
	b := make([]byte, 8+len(payload))
	binary.BigEndian.PutUint16(b[0:], 5060)
	binary.BigEndian.PutUint16(b[2:], 5070)
	binary.BigEndian.PutUint16(b[4:], uint16(len(b)))
	copy(b[8:], payload)
	return b
}

func ipv4(proto byte, id uint16, flagsOff uint16, payload []byte) []byte {
	b := make([]byte, 20+len(payload))
	b[0] = 0x45
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	binary.BigEndian.PutUint16(b[4:], id)
	binary.BigEndian.PutUint16(b[6:], flagsOff)
	b[8], b[9] = 64, proto
	copy(b[12:], srcIP.AsSlice())
	copy(b[16:], dstIP.AsSlice())
	copy(b[20:], payload)
	return b
}

func ipv6(next byte, payload []byte) []byte {
	b := make([]byte, 40+len(payload))
	b[0] = 0x60
	binary.BigEndian.PutUint16(b[4:], uint16(len(payload)))
	b[6], b[7] = next, 64
	copy(b[8:], src6.AsSlice())
	copy(b[24:], dst6.AsSlice())
	copy(b[40:], payload)
	return b
}

func ether(et uint16, tags []uint16, payload []byte) []byte {
	b := make([]byte, 12)
	for _, tpid := range tags {
		b = binary.BigEndian.AppendUint16(b, tpid)
		b = binary.BigEndian.AppendUint16(b, 100)
	}
	b = binary.BigEndian.AppendUint16(b, et)
	return append(b, payload...)
}

func TestLinkTypes(t *testing.T) {
	ip4 := ipv4(protoUDP, 1, 0, udpSeg("hello"))
	ip6 := ipv6(protoUDP, udpSeg("hello"))
	pppoe := func(p []byte) []byte {
		h := []byte{0x11, 0, 0, 1, 0, 0, 0x00, 0x21}
		binary.BigEndian.PutUint16(h[4:], uint16(len(p)+2))
		return append(h, p...)
	}
	sll := func(et uint16, p []byte) []byte {
		h := make([]byte, 16)
		binary.BigEndian.PutUint16(h[14:], et)
		return append(h, p...)
	}
	sll2 := func(et uint16, p []byte) []byte {
		h := make([]byte, 20)
		binary.BigEndian.PutUint16(h[0:], et)
		return append(h, p...)
	}
	null := func(fam uint32, order binary.ByteOrder, p []byte) []byte {
		h := make([]byte, 4)
		order.PutUint32(h, fam)
		return append(h, p...)
	}
	tests := []struct {
		name string
		link wire.LinkType
		data []byte
		want netip.Addr
	}{
		{name: "ethernet ipv4", link: wire.LinkEthernet, data: ether(etherIPv4, nil, ip4), want: srcIP},
		{name: "ethernet padded", link: wire.LinkEthernet, data: append(ether(etherIPv4, nil, ip4), 0, 0, 0, 0), want: srcIP},
		{name: "ethernet ipv6", link: wire.LinkEthernet, data: ether(etherIPv6, nil, ip6), want: src6},
		{name: "802.1Q", link: wire.LinkEthernet, data: ether(etherIPv4, []uint16{etherVLAN}, ip4), want: srcIP},
		{name: "QinQ", link: wire.LinkEthernet, data: ether(etherIPv4, []uint16{etherQinQ, etherVLAN}, ip4), want: srcIP},
		{name: "PPPoE", link: wire.LinkEthernet, data: ether(etherPPPoESess, nil, pppoe(ip4)), want: srcIP},
		{name: "linux sll", link: wire.LinkLinuxSLL, data: sll(etherIPv4, ip4), want: srcIP},
		{name: "linux sll2", link: linkTypeSLL2, data: sll2(etherIPv6, ip6), want: src6},
		{name: "raw", link: wire.LinkRaw, data: ip4, want: srcIP},
		{name: "raw ipv6 linktype", link: wire.LinkIPv6, data: ip6, want: src6},
		{name: "null little endian", link: wire.LinkNull, data: null(2, binary.LittleEndian, ip4), want: srcIP},
		{name: "null big endian v6", link: wire.LinkNull, data: null(30, binary.BigEndian, ip6), want: src6},
		{name: "loop", link: wire.LinkLoop, data: null(2, binary.BigEndian, ip4), want: srcIP},
		{name: "ip in ip", link: wire.LinkRaw, data: ipv4(protoIPIP, 2, 0, ip4), want: srcIP},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{}
			d := New(Options{}, s)
			d.Decode(time.Unix(1, 0), tc.link, tc.data)
			if len(s.udp) != 1 {
				t.Fatalf("got %d datagrams; stats %+v", len(s.udp), d.Stats())
			}
			u := s.udp[0]
			if u.Src.Addr() != tc.want || u.Src.Port() != 5060 || u.Dst.Port() != 5070 || string(u.Payload) != "hello" {
				t.Errorf("datagram %v → %v %q", u.Src, u.Dst, u.Payload)
			}
		})
	}
}

func TestHostileFramesAreCounted(t *testing.T) {
	tests := []struct {
		name   string
		link   wire.LinkType
		data   []byte
		reason string
	}{
		{name: "short ethernet", link: wire.LinkEthernet, data: []byte{1, 2, 3}, reason: SkipTruncated},
		{name: "arp", link: wire.LinkEthernet, data: ether(0x0806, nil, make([]byte, 28)), reason: SkipNotIP},
		{name: "unknown link", link: 250, data: []byte{1}, reason: SkipLinkType},
		{name: "ip length beyond frame", link: wire.LinkRaw, data: ipv4(protoUDP, 1, 0, udpSeg("x"))[:25], reason: SkipTruncated},
		{name: "icmp", link: wire.LinkRaw, data: ipv4(1, 1, 0, make([]byte, 8)), reason: SkipProto},
		{name: "bad udp length", link: wire.LinkRaw, data: ipv4(protoUDP, 1, 0, []byte{0, 1, 0, 2, 0, 3, 0, 0}), reason: SkipBadUDP},
		{name: "gre version 1 (pptp)", link: wire.LinkRaw, data: ipv4(protoGRE, 1, 0, []byte{0x30, 0x81, 0x88, 0x0B, 0, 0, 0, 0, 0, 0, 0, 1}), reason: SkipTunnel},
		{name: "gre carrying ppp", link: wire.LinkRaw, data: ipv4(protoGRE, 1, 0, []byte{0, 0, 0x88, 0x0B, 0xFF, 0x03}), reason: SkipTunnel},
		{name: "gre key beyond frame", link: wire.LinkRaw, data: ipv4(protoGRE, 1, 0, []byte{greKey, 0, 0x65, 0x58, 0}), reason: SkipTruncated},
		{name: "etherip", link: wire.LinkRaw, data: ipv4(protoEtherIP, 1, 0, []byte{0x30, 0}), reason: SkipTunnel},
		{name: "l2tpv3", link: wire.LinkRaw, data: ipv4(protoL2TPv3, 1, 0, make([]byte, 8)), reason: SkipTunnel},
		{name: "esp", link: wire.LinkRaw, data: ipv4(protoESP, 1, 0, make([]byte, 16)), reason: SkipEncrypted},
		{name: "mpls over neither ip nor ethernet", link: wire.LinkEthernet, data: ether(etherMPLS, nil, []byte{0, 1, 0x21, 64, 0x90}), reason: SkipTunnel},
		{name: "mpls stack with no bottom", link: wire.LinkEthernet, data: ether(etherMPLS, nil, make([]byte, 24)), reason: SkipTruncated},
		{name: "mpls tower", link: wire.LinkEthernet, data: ether(etherMPLS, nil, make([]byte, 4*(maxEncapsulation+2))), reason: SkipTooDeep},
		{name: "empty vxlan", link: wire.LinkRaw, data: ipv4(protoUDP, 1, 0, vxlanSeg()), reason: SkipTruncated},
		{name: "vlan tower", link: wire.LinkEthernet, data: ether(etherIPv4, make16(etherVLAN, maxEncapsulation+2), nil), reason: SkipTooDeep},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New(Options{}, &sink{})
			d.Decode(time.Unix(1, 0), tc.link, tc.data)
			if got := d.Stats().Skipped[tc.reason]; got != 1 {
				t.Errorf("skipped = %v, want one %s", d.Stats().Skipped, tc.reason)
			}
		})
	}
}

func make16(v uint16, n int) []uint16 {
	s := make([]uint16, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestIPv4Reassembly(t *testing.T) {
	whole := udpSeg("0123456789abcdefghijklmnopqrstuv") // 40 bytes
	first := ipv4(protoUDP, 7, 0x2000, whole[:24])
	second := ipv4(protoUDP, 7, 3, whole[24:]) // offset 24/8
	t.Run("out of order", func(t *testing.T) {
		s := &sink{}
		d := New(Options{}, s)
		d.Decode(time.Unix(1, 0), wire.LinkRaw, second)
		d.Decode(time.Unix(1, 0), wire.LinkRaw, first)
		if len(s.udp) != 1 || string(s.udp[0].Payload) != string(whole[8:]) || !s.udp[0].Fragmented {
			t.Fatalf("got %+v", s.udp)
		}
		if st := d.Stats().Frag; st.Reassembled != 1 || st.Pending != 0 {
			t.Errorf("frag stats %+v", st)
		}
	})
	t.Run("timed out", func(t *testing.T) {
		s := &sink{}
		d := New(Options{FragTimeout: time.Second}, s)
		d.Decode(time.Unix(1, 0), wire.LinkRaw, first)
		d.Decode(time.Unix(10, 0), wire.LinkRaw, second)
		if len(s.udp) != 0 {
			t.Fatalf("reassembled across the timeout")
		}
		if st := d.Stats().Frag; st.TimedOut != 1 {
			t.Errorf("frag stats %+v", st)
		}
	})
	t.Run("table full", func(t *testing.T) {
		d := New(Options{MaxFragDatagrams: 2}, &sink{})
		for id := range uint16(5) {
			d.Decode(time.Unix(1, 0), wire.LinkRaw, ipv4(protoUDP, id, 0x2000, whole[:24]))
		}
		if st := d.Stats().Frag; st.TableFull != 3 || st.Pending != 2 {
			t.Errorf("frag stats %+v", st)
		}
	})
	t.Run("oversize", func(t *testing.T) {
		d := New(Options{}, &sink{})
		d.Decode(time.Unix(1, 0), wire.LinkRaw, ipv4(protoUDP, 9, 0x1FFF, whole[:24]))
		if st := d.Stats().Frag; st.Oversize != 1 {
			t.Errorf("frag stats %+v", st)
		}
	})
}

func TestIPv6Reassembly(t *testing.T) {
	whole := udpSeg("0123456789abcdefghijklmnopqrstuv")
	frag := func(off int, more bool, p []byte) []byte {
		h := []byte{protoUDP, 0, 0, 0, 0, 0, 0, 42}
		fo := uint16(off)
		if more {
			fo |= 1
		}
		binary.BigEndian.PutUint16(h[2:], fo)
		return ipv6(protoFragment, append(h, p...))
	}
	s := &sink{}
	d := New(Options{}, s)
	d.Decode(time.Unix(1, 0), wire.LinkRaw, frag(0, true, whole[:16]))
	d.Decode(time.Unix(1, 0), wire.LinkRaw, frag(16, false, whole[16:]))
	if len(s.udp) != 1 || string(s.udp[0].Payload) != string(whole[8:]) || s.udp[0].Src.Addr() != src6 {
		t.Fatalf("got %+v", s.udp)
	}
}

func tcpSeg(sport uint16, seq uint32, flags byte, payload string) []byte {
	b := make([]byte, 20+len(payload))
	binary.BigEndian.PutUint16(b[0:], sport)
	binary.BigEndian.PutUint16(b[2:], 5060)
	binary.BigEndian.PutUint32(b[4:], seq)
	b[12], b[13] = 5<<4, flags
	copy(b[20:], payload)
	return b
}

func TestTCPReassembly(t *testing.T) {
	seg := func(seq uint32, flags byte, p string) []byte {
		return ipv4(protoTCP, 1, 0, tcpSeg(4000, seq, flags, p))
	}
	tests := []struct {
		name string
		segs [][]byte
		want string
	}{
		{name: "in order", segs: [][]byte{seg(99, tcpSYN, ""), seg(100, 0, "abc"), seg(103, 0, "def")}, want: "abcdef"},
		{name: "out of order", segs: [][]byte{seg(99, tcpSYN, ""), seg(103, 0, "def"), seg(100, 0, "abc")}, want: "abcdef"},
		{name: "retransmission and overlap", segs: [][]byte{seg(99, tcpSYN, ""), seg(100, 0, "abc"), seg(100, 0, "abc"), seg(101, 0, "bcdE")}, want: "abcdE"},
		{name: "joined mid-stream", segs: [][]byte{seg(5000, 0, "xy"), seg(5002, 0, "z")}, want: "xyz"},
		{name: "sequence wraps", segs: [][]byte{seg(0xFFFFFFFE, 0, "ab"), seg(0, 0, "cd")}, want: "abcd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{}
			d := New(Options{}, s)
			for _, b := range tc.segs {
				d.Decode(time.Unix(1, 0), wire.LinkRaw, b)
			}
			if got := string(s.streams[netip.AddrPortFrom(srcIP, 4000)]); got != tc.want {
				t.Errorf("stream %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTCPKeepsUnconsumedBytes(t *testing.T) {
	// The handler consumes only whole "lines": bytes of a line split over
	// segments come back with the next segment.
	s := &sink{consume: func(b []byte) int {
		n := 0
		for i, c := range b {
			if c == '\n' {
				n = i + 1
			}
		}
		return n
	}}
	d := New(Options{}, s)
	for i, p := range []string{"one\ntw", "o\nthr", "ee\n"} {
		d.Decode(time.Unix(1, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000, uint32(100+[]int{0, 6, 11}[i]), 0, p)))
	}
	if got := string(s.streams[netip.AddrPortFrom(srcIP, 4000)]); got != "one\ntwo\nthree\n" {
		t.Errorf("consumed %q", got)
	}
}

func TestTCPBounds(t *testing.T) {
	t.Run("streams evicted", func(t *testing.T) {
		d := New(Options{MaxStreams: 2}, &sink{})
		for p := range uint16(4) {
			d.Decode(time.Unix(1, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000+p, 1, 0, "x")))
		}
		if st := d.Stats().TCP; st.Evicted != 2 || st.Open != 2 {
			t.Errorf("tcp stats %+v", st)
		}
	})
	t.Run("buffer full", func(t *testing.T) {
		d := New(Options{MaxStreamBuffer: 4}, &sink{consume: func([]byte) int { return 0 }})
		d.Decode(time.Unix(1, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000, 1, 0, "toolong")))
		if st := d.Stats().TCP; st.BufferFull != 1 {
			t.Errorf("tcp stats %+v", st)
		}
	})
	t.Run("gap given up", func(t *testing.T) {
		s := &sink{}
		d := New(Options{MaxOutOfOrder: 1}, s)
		d.Decode(time.Unix(1, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000, 1, 0, "a")))
		d.Decode(time.Unix(1, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000, 10, 0, "c")))
		d.Decode(time.Unix(1, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000, 11, 0, "d")))
		if st := d.Stats().TCP; st.Gaps != 1 {
			t.Errorf("tcp stats %+v", st)
		}
		if got := string(s.streams[netip.AddrPortFrom(srcIP, 4000)]); got != "acd" {
			t.Errorf("stream %q", got)
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add(uint16(wire.LinkEthernet), ether(etherIPv4, nil, ipv4(protoUDP, 1, 0, udpSeg("x"))))
	f.Add(uint16(wire.LinkRaw), ipv4(protoTCP, 1, 0, tcpSeg(1, 1, 0, "abc")))
	f.Add(uint16(wire.LinkRaw), ipv6(protoFragment, []byte{17, 0, 0, 1, 0, 0, 0, 1, 1, 2, 3}))
	// One frame of each tunnel capture (testdata/tunnels): GRE, GRE in
	// GRE, PPTP, ERSPAN I/II/III, MPLS, VXLAN over IPv4 and IPv6.
	for _, tc := range tunnelCaptures {
		var seed []byte
		refdata.EachRecord(f, filepath.Join("testdata", "tunnels", tc.file), func(rec pcapfile.Record) {
			if seed == nil || len(rec.Data) > len(seed) && len(rec.Data) < 600 {
				seed = slices.Clone(rec.Data)
			}
		})
		f.Add(uint16(wire.LinkEthernet), seed)
	}
	f.Fuzz(func(t *testing.T, link uint16, b []byte) {
		d := New(Options{MaxStreams: 4, MaxFragDatagrams: 4}, &sink{})
		d.Decode(time.Unix(1, 0), wire.LinkType(link), b)
		d.Decode(time.Unix(2, 0), wire.LinkType(link), b)
		// With frame tracking (export), every named frame is one that was fed.
		l := &lineSink{}
		tracked := New(Options{MaxStreams: 4, MaxFragDatagrams: 4, TrackFrames: true}, l)
		tracked.DecodeTagged(1, time.Unix(1, 0), wire.LinkType(link), b)
		tracked.DecodeTagged(2, time.Unix(2, 0), wire.LinkType(link), b)
		for _, fs := range append(l.udp, l.frames...) {
			for _, tag := range fs {
				if tag != 1 && tag != 2 {
					t.Fatalf("a payload names frame %d, never fed", tag)
				}
			}
		}
	})
}

func BenchmarkDecodeUDP(b *testing.B) {
	frame := ether(etherIPv4, nil, ipv4(protoUDP, 1, 0, udpSeg("INVITE sip:x SIP/2.0\r\n\r\n")))
	d := New(Options{}, nopHandler{})
	b.ReportAllocs()
	for b.Loop() {
		d.Decode(time.Unix(1, 0), wire.LinkEthernet, frame)
	}
}

// BenchmarkDecodeVXLAN is the same datagram as BenchmarkDecodeUDP behind
// VXLAN: opening a tunnel allocates nothing either.
func BenchmarkDecodeVXLAN(b *testing.B) {
	inner := ether(etherIPv4, nil, ipv4(protoUDP, 1, 0, udpSeg("INVITE sip:x SIP/2.0\r\n\r\n")))
	outer := vxlanSeg()
	binary.BigEndian.PutUint16(outer[4:], uint16(len(outer)+len(inner)))
	frame := ether(etherIPv4, nil, ipv4(protoUDP, 1, 0, append(outer, inner...)))
	d := New(Options{}, nopHandler{})
	b.ReportAllocs()
	for b.Loop() {
		d.Decode(time.Unix(1, 0), wire.LinkEthernet, frame)
	}
	if d.Stats().Tunnels[TunnelVXLAN] == 0 || d.Stats().UDP == 0 {
		b.Fatalf("no datagram out of VXLAN: %+v", d.Stats())
	}
}

type nopHandler struct{}

func (nopHandler) UDP(*Datagram)                      {}
func (nopHandler) TCP(*Stream, time.Time, []byte) int { return 0 }

// vxlanSeg is a UDP datagram to VXLAN's port with an empty VXLAN header.
func vxlanSeg() []byte {
	b := make([]byte, 16)
	binary.BigEndian.PutUint16(b[0:], 40000)
	binary.BigEndian.PutUint16(b[2:], DefaultVXLANPort)
	binary.BigEndian.PutUint16(b[4:], uint16(len(b)))
	return b
}
