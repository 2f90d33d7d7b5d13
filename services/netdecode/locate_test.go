package netdecode

import (
	"bytes"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fieldtap/drivers/wire"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"fieldtap/drivers/pcapfile"
	"fieldtap/tools/refdata"
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
		link   wire.LinkType
		layers func() []gopacket.SerializableLayer
	}{
		{name: "ethernet ipv4 (options) udp", link: wire.LinkEthernet, layers: func() []gopacket.SerializableLayer {
			ip := v4(layers.IPProtocolUDP)
			udp.SetNetworkLayerForChecksum(ip)
			return []gopacket.SerializableLayer{eth(layers.EthernetTypeIPv4), ip, udp, payload}
		}},
		{name: "vlan ipv6 tcp (options)", link: wire.LinkEthernet, layers: func() []gopacket.SerializableLayer {
			ip := v6(layers.IPProtocolTCP)
			tcp.SetNetworkLayerForChecksum(ip)
			return []gopacket.SerializableLayer{eth(layers.EthernetTypeDot1Q), &layers.Dot1Q{VLANIdentifier: 7, Type: layers.EthernetTypeIPv6}, ip, tcp, payload}
		}},
		{name: "raw ipv4 udp", link: wire.LinkRaw, layers: func() []gopacket.SerializableLayer {
			ip := v4(layers.IPProtocolUDP)
			udp.SetNetworkLayerForChecksum(ip)
			return []gopacket.SerializableLayer{ip, udp, payload}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := serialize(t, tc.layers()...)
			l, ok := Locate(tc.link, b, nil)
			if !ok {
				t.Fatal("not located")
			}
			pkt := gopacket.NewPacket(b, layers.LinkType(tc.link), gopacket.Default)
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
	if l, ok := Locate(wire.LinkRaw, b, nil); !ok || !l.Fragment || l.Payload != 28 {
		t.Errorf("first fragment: %+v %v", l, ok)
	}
	ip.FragOffset = 2
	b = serialize(t, ip, gopacket.Payload(make([]byte, 16)))
	if _, ok := Locate(wire.LinkRaw, b, nil); ok {
		t.Error("a later fragment was located")
	}
}

func FuzzLocate(f *testing.F) {
	ip := &layers.IPv4{Version: 4, IHL: 5, Protocol: layers.IPProtocolUDP, SrcIP: net.IP{1, 2, 3, 4}, DstIP: net.IP{5, 6, 7, 8}}
	udp := &layers.UDP{SrcPort: 1, DstPort: 2}
	udp.SetNetworkLayerForChecksum(ip)
	f.Add(uint16(wire.LinkEthernet), serialize(f, &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}, ip, udp))
	f.Add(uint16(wire.LinkLinuxSLL), make([]byte, 40))
	for _, tc := range tunnelCaptures {
		refdata.EachRecord(f, filepath.Join("testdata", "tunnels", tc.file), func(rec pcapfile.Record) {
			f.Add(uint16(rec.Link), rec.Data)
		})
	}
	f.Fuzz(func(t *testing.T, link uint16, b []byte) {
		l, ok := Locate(wire.LinkType(link), b, []uint16{DefaultVXLANPort, 8472})
		if ok && (l.Payload < 0 || l.Payload > len(b) || l.Tunnelled() && !l.OuterDst.IsValid()) {
			t.Fatalf("payload offset %d in %d bytes", l.Payload, len(b))
		}
	})
}

// TestLocateOpensTunnels: in every tunnel capture, the packet Locate finds
// is the innermost one tshark decodes (the last IPv4 or IPv6 header of
// the frame, its addresses), and it says the packet came through a
// tunnel exactly when tshark saw it inside one that an IP packet carried.
func TestLocateOpensTunnels(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: it is the reference for the tunnel captures (.ci/run installs it)")
	}
	for _, tc := range tunnelCaptures {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "tunnels", tc.file)
			args := append([]string{"-r", path}, tc.tshark...)
			args = append(args, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,",
				"-e", "frame.protocols", "-e", "ip.src", "-e", "ip.dst", "-e", "ipv6.src", "-e", "ipv6.dst")
			out, err := exec.Command("tshark", args...).Output()
			if err != nil {
				t.Fatalf("tshark %v: %v", args, err)
			}
			lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			last := func(s string) string { return s[strings.LastIndexByte(s, ',')+1:] }
			i, checked := 0, 0
			refdata.EachRecord(t, path, func(rec pcapfile.Record) {
				f := strings.Split(lines[i], "\t")
				i++
				protos := strings.Split(f[0], ":")
				net := lastNet(protos)
				lastIP, firstIP, tunnel, icmp := -1, -1, -1, -1
				for j, p := range protos {
					switch {
					case p == "ip" || p == "ipv6":
						lastIP = j
						if firstIP < 0 {
							firstIP = j
						}
					case (p == "gre" || p == "vxlan" || p == "mpls") && firstIP >= 0 && tunnel < 0:
						tunnel = j
					case (p == "icmp" || p == "icmpv6") && icmp < 0:
						icmp = j
					}
				}
				if net == "" || icmp >= 0 && icmp < lastIP || slices.Contains(protos, "ppp") {
					return // no IP, a packet quoted in ICMP, or PPP behind GRE (not opened)
				}
				want := last(f[1]) + ">" + last(f[2])
				if net == "ipv6" {
					want = last(f[3]) + ">" + last(f[4])
				}
				tunnelled := tunnel >= 0 && lastIP > tunnel // an IP packet inside an IP tunnel
				l, ok := Locate(rec.Link, rec.Data, tc.vxlanPorts)
				if got := l.Src.Addr().String() + ">" + l.Dst.Addr().String(); !ok || got != want {
					t.Errorf("frame %d: located %s (%v), tshark's innermost IP %s", i, got, ok, want)
				}
				if l.Tunnelled() != tunnelled {
					t.Errorf("frame %d: tunnelled %v, tshark's layers %s", i, l.Tunnelled(), f[0])
				}
				checked++
			})
			if checked == 0 && tc.file != "zeek-gre-pptp.pcap" {
				t.Errorf("no frame with an IP packet to compare")
			}
		})
	}
}
