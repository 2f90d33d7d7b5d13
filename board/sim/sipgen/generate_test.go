package sipgen

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// collect runs Generate and keeps every packet.
func collect(t *testing.T, o Options) []Packet {
	t.Helper()
	var ps []Packet
	if err := Generate(o, func(p Packet) error { ps = append(ps, p); return nil }); err != nil {
		t.Fatalf("Generate(%+v): %v", o, err)
	}
	return ps
}

func pcapng(t *testing.T, o Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WritePcapng(&b, o); err != nil {
		t.Fatalf("WritePcapng: %v", err)
	}
	return b.Bytes()
}

func TestDeterministic(t *testing.T) {
	o := Options{Seed: 7, Start: t0, Duration: 30 * time.Second, Calls: 6}
	a, b := pcapng(t, o), pcapng(t, o)
	if !bytes.Equal(a, b) {
		t.Fatal("same options gave different pcapng bytes")
	}
	o.Seed++
	if bytes.Equal(a, pcapng(t, o)) {
		t.Fatal("a different seed gave the same bytes")
	}
}

func TestTimes(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{name: "default minute", o: Options{Start: t0, Duration: time.Minute}},
		{name: "dense", o: Options{Start: t0, Duration: 20 * time.Second, Calls: 10}},
		{name: "one short call", o: Options{Start: t0.Add(time.Hour), Duration: MinCallSlot}},
		{name: "tightest slots", o: Options{Start: t0, Duration: time.Minute, Calls: int(time.Minute / MinCallSlot)}},
		{name: "sub-microsecond start", o: Options{Start: t0.Add(123), Duration: 12 * time.Second, Calls: 6}},
	}
	const seeds = 20 // late calls are squeezed differently per seed
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range int64(seeds) {
				tc.o.Seed = seed
				checkTimes(t, tc.o)
			}
		})
	}
}

func checkTimes(t *testing.T, o Options) {
	t.Helper()
	ps := collect(t, o)
	end := o.Start.Add(o.Duration)
	if !ps[0].Time.Equal(o.Start) {
		t.Fatalf("seed %d: first packet at %v, want Start %v", o.Seed, ps[0].Time, o.Start)
	}
	for i, p := range ps {
		if !p.Time.Before(end) {
			t.Fatalf("seed %d: packet %d at %v, not before end %v", o.Seed, i, p.Time, end)
		}
		if i > 0 && p.Time.Before(ps[i-1].Time) {
			t.Fatalf("seed %d: packet %d at %v precedes packet %d at %v", o.Seed, i, p.Time, i-1, ps[i-1].Time)
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{name: "zero duration", o: Options{Start: t0}},
		{name: "negative duration", o: Options{Start: t0, Duration: -time.Second}},
		{name: "negative calls", o: Options{Start: t0, Duration: time.Minute, Calls: -1}},
		{name: "too many calls", o: Options{Start: t0, Duration: time.Minute, Calls: 31}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			err := Generate(tc.o, func(Packet) error { called = true; return nil })
			if err == nil || called {
				t.Fatalf("Generate(%+v) = %v, emitted %v; want an error and nothing emitted", tc.o, err, called)
			}
		})
	}
}

func TestEmitErrorStops(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Generate(Options{Start: t0, Duration: time.Minute}, func(Packet) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Fatalf("Generate returned %v after %d packets; want %v after 3", err, n, stop)
	}
}

func TestDefaultSize(t *testing.T) {
	// A default minute must stay a modest fixture: well under a few MB.
	const maxBytes = 3 << 20
	if n := len(pcapng(t, Options{Start: t0, Duration: time.Minute})); n > maxBytes {
		t.Fatalf("default minute is %d bytes, want at most %d", n, maxBytes)
	}
}

// onesSum is the RFC 1071 one's complement sum of b, folded to 16 bits.
func onesSum(sum uint32, b []byte) uint16 {
	for len(b) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// TestFrames decodes every frame independently of the serialiser: Ethernet
// addressing, IPv4 header checksum and lengths, UDP checksum over the
// pseudo-header, documentation address ranges.
func TestFrames(t *testing.T) {
	for i, p := range collect(t, Options{Seed: 5, Start: t0, Duration: time.Minute}) {
		pkt := gopacket.NewPacket(p.Data, layers.LayerTypeEthernet, gopacket.Default)
		ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if ip == nil || udp == nil || pkt.ErrorLayer() != nil {
			t.Fatalf("packet %d: not Ethernet/IPv4/UDP: %v", i, pkt)
		}
		hdr := p.Data[14 : 14+20]
		if got := onesSum(0, hdr); got != 0xffff {
			t.Fatalf("packet %d: IPv4 header checksum sums to %#04x", i, got)
		}
		seg := p.Data[14+20 : 14+int(ip.Length)]
		if int(udp.Length) != len(seg) {
			t.Fatalf("packet %d: UDP length %d, segment %d", i, udp.Length, len(seg))
		}
		pseudo := append(append([]byte{}, ip.SrcIP.To4()...), ip.DstIP.To4()...)
		pseudo = append(pseudo, 0, byte(layers.IPProtocolUDP), byte(len(seg)>>8), byte(len(seg)))
		if got := onesSum(uint32(onesSum(0, pseudo)), seg); got != 0xffff || udp.Checksum == 0 {
			t.Fatalf("packet %d: UDP checksum %#04x sums to %#04x", i, udp.Checksum, got)
		}
		for _, a := range []gopacket.Endpoint{pkt.NetworkLayer().NetworkFlow().Src(), pkt.NetworkLayer().NetworkFlow().Dst()} {
			if s := a.String(); !strings.HasPrefix(s, "192.0.2.") && !strings.HasPrefix(s, "198.51.100.") {
				t.Fatalf("packet %d: address %s outside the documentation ranges", i, s)
			}
		}
	}
}
