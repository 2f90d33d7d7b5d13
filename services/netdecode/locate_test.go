package netdecode

import (
	"bytes"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

func serialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestLocateAgreesWithGopacket: addresses, ports and the payload offset
// match what gopacket's decoder (an independent one) finds.
func TestLocateAgreesWithGopacket(t *testing.T) {
	eth := func(et layers.EthernetType) *layers.Ethernet {
		return &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: et}
	}
	v4 := func(p layers.IPProtocol) *layers.IPv4 {
		return &layers.IPv4{Version: 4, IHL: 6, Options: []layers.IPv4Option{{OptionType: 0x94, OptionLength: 4, OptionData: []byte{0, 0}}}, TTL: 64, Protocol: p, SrcIP: net.IP{192, 0, 2, 1}, DstIP: net.IP{192, 0, 2, 2}}
	}
	v6 := func(p layers.IPProtocol) *layers.IPv6 {
		return &layers.IPv6{Version: 6, NextHeader: p, HopLimit: 64, SrcIP: net.ParseIP("2001:db8::1"), DstIP: net.ParseIP("2001:db8::2")}
	}
	udp := &layers.UDP{SrcPort: 4000, DstPort: 5060}
	tcp := &layers.TCP{SrcPort: 5061, DstPort: 40000, Seq: 1, DataOffset: 8, Options: []layers.TCPOption{{OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 1}, {OptionType: 0}}}
	payload := gopacket.Payload("RTP-or-SIP")
	cases := []struct {
		name   string
		link   layers.LinkType
		layers func() []gopacket.SerializableLayer
	}{
		{name: "ethernet ipv4 (options) udp", link: layers.LinkTypeEthernet, layers: func() []gopacket.SerializableLayer {
			ip := v4(layers.IPProtocolUDP)
			udp.SetNetworkLayerForChecksum(ip)
			return []gopacket.SerializableLayer{eth(layers.EthernetTypeIPv4), ip, udp, payload}
		}},
		{name: "vlan ipv6 tcp (options)", link: layers.LinkTypeEthernet, layers: func() []gopacket.SerializableLayer {
			ip := v6(layers.IPProtocolTCP)
			tcp.SetNetworkLayerForChecksum(ip)
			return []gopacket.SerializableLayer{eth(layers.EthernetTypeDot1Q), &layers.Dot1Q{VLANIdentifier: 7, Type: layers.EthernetTypeIPv6}, ip, tcp, payload}
		}},
		{name: "raw ipv4 udp", link: layers.LinkTypeRaw, layers: func() []gopacket.SerializableLayer {
			ip := v4(layers.IPProtocolUDP)
			udp.SetNetworkLayerForChecksum(ip)
			return []gopacket.SerializableLayer{ip, udp, payload}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := serialize(t, tc.layers()...)
			l, ok := Locate(tc.link, b)
			if !ok {
				t.Fatal("not located")
			}
			pkt := gopacket.NewPacket(b, tc.link, gopacket.Default)
			net, tr := pkt.NetworkLayer(), pkt.TransportLayer()
			app := pkt.ApplicationLayer()
			if net == nil || tr == nil || app == nil {
				t.Fatalf("gopacket decoded %v", pkt)
			}
			if l.Src.Addr().String() != net.NetworkFlow().Src().String() || l.Dst.Addr().String() != net.NetworkFlow().Dst().String() {
				t.Errorf("addresses %v→%v, gopacket %v", l.Src, l.Dst, net.NetworkFlow())
			}
			// The payload's own offset: Ethernet pads short frames, so
			// counting back from the end would be off.
			if got, want := l.Payload, bytes.Index(b, app.Payload()); got != want {
				t.Errorf("payload at %d, gopacket at %d", got, want)
			}
			if tr.TransportFlow().Src().String() != itoa(l.Src.Port()) || tr.TransportFlow().Dst().String() != itoa(l.Dst.Port()) {
				t.Errorf("ports %d→%d, gopacket %v", l.Src.Port(), l.Dst.Port(), tr.TransportFlow())
			}
		})
	}
}

func itoa(p uint16) string {
	return gopacket.NewEndpoint(layers.EndpointUDPPort, []byte{byte(p >> 8), byte(p)}).String()
}

func TestLocateFragments(t *testing.T) {
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{192, 0, 2, 1}, DstIP: net.IP{192, 0, 2, 2}, Flags: layers.IPv4MoreFragments}
	b := serialize(t, ip, gopacket.Payload(make([]byte, 16)))
	if l, ok := Locate(layers.LinkTypeRaw, b); !ok || !l.Fragment || l.Payload != 28 {
		t.Errorf("first fragment: %+v %v", l, ok)
	}
	ip.FragOffset = 2
	b = serialize(t, ip, gopacket.Payload(make([]byte, 16)))
	if _, ok := Locate(layers.LinkTypeRaw, b); ok {
		t.Error("a later fragment was located")
	}
}

func FuzzLocate(f *testing.F) {
	ip := &layers.IPv4{Version: 4, IHL: 5, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{1, 2, 3, 4}, DstIP: net.IP{5, 6, 7, 8}}
	udp := &layers.UDP{SrcPort: 1, DstPort: 2}
	udp.SetNetworkLayerForChecksum(ip)
	f.Add(uint16(layers.LinkTypeEthernet), serialize(f, &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}, ip, udp))
	f.Add(uint16(layers.LinkTypeLinuxSLL), make([]byte, 40))
	f.Fuzz(func(t *testing.T, link uint16, b []byte) {
		l, ok := Locate(layers.LinkType(link), b)
		if ok && (l.Payload < 0 || l.Payload > len(b)) {
			t.Fatalf("payload offset %d in %d bytes", l.Payload, len(b))
		}
	})
}
