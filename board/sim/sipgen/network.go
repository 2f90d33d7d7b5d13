package sipgen

import (
	"fmt"
	"math/rand/v2"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Addresses come from the documentation ranges (RFC 5737 for IPv4, RFC 7042
// for MAC-48), so a generated capture never names a real network.
var (
	localNet  = [3]byte{192, 0, 2}    // the captured segment
	remoteNet = [3]byte{198, 51, 100} // behind the router
	macPrefix = [5]byte{0x00, 0x00, 0x5e, 0x00, 0x53}
)

const (
	hostsPerSide   = 8  // phones on each side of the router
	routerOctet    = 1  // the router's address on the captured segment
	firstHostOctet = 10 // phones take .10 upwards
	localExtBase   = 1000
	remoteExtBase  = 2000

	localTTL  = 64           // Linux default
	remoteTTL = localTTL - 1 // one router hop to the SPAN port

	sipPort    = 5060
	rtpPortMin = 10000 // RTP ports are even and in [rtpPortMin, rtpPortMax)
	rtpPortMax = 20000
)

// host is a phone as seen on the captured segment.
type host struct {
	ip      net.IP
	mac     net.HardwareAddr // its own when local, the router's when remote
	ttl     uint8            // IPv4 TTL as it reaches the SPAN port
	user    string           // the phone's extension
	agent   string           // User-Agent / Server value
	ipID    uint16           // next IPv4 identification
	nextRTP uint16           // next RTP port to hand out
}

// endpoint is a host and a UDP port.
type endpoint struct {
	h    *host
	port uint16
}

// datagram is one UDP payload between two endpoints.
type datagram struct {
	src, dst endpoint
	payload  []byte
}

// network holds the phones on both sides of the router.
type network struct {
	local, remote []*host
}

func newNetwork(r *rand.Rand) *network {
	router := macAddr(routerOctet)
	n := &network{}
	for i := range hostsPerSide {
		octet := byte(firstHostOctet + i)
		n.local = append(n.local, newHost(r, localNet, octet, macAddr(octet), localTTL,
			localExtBase+int(octet), "fieldtap-sipgen desk/1.0"))
		n.remote = append(n.remote, newHost(r, remoteNet, octet, router, remoteTTL,
			remoteExtBase+int(octet), "fieldtap-sipgen soft/1.0"))
	}
	return n
}

func newHost(r *rand.Rand, subnet [3]byte, octet byte, mac net.HardwareAddr, ttl uint8, ext int, agent string) *host {
	const rtpPorts = (rtpPortMax - rtpPortMin) / 2
	return &host{
		ip:      net.IPv4(subnet[0], subnet[1], subnet[2], octet).To4(),
		mac:     mac,
		ttl:     ttl,
		user:    fmt.Sprint(ext),
		agent:   agent,
		ipID:    uint16(r.Uint32()),
		nextRTP: uint16(rtpPortMin + 2*r.IntN(rtpPorts)),
	}
}

func macAddr(last byte) net.HardwareAddr {
	return net.HardwareAddr{macPrefix[0], macPrefix[1], macPrefix[2], macPrefix[3], macPrefix[4], last}
}

// rtpPort hands out the host's next even RTP port, so concurrent calls on one
// phone never share one.
func (h *host) rtpPort() uint16 {
	p := h.nextRTP
	h.nextRTP += 2
	if h.nextRTP >= rtpPortMax {
		h.nextRTP = rtpPortMin
	}
	return p
}

// framer serialises datagrams into Ethernet frames, reusing one buffer.
type framer struct {
	buf gopacket.SerializeBuffer
}

func newFramer() *framer { return &framer{buf: gopacket.NewSerializeBuffer()} }

// frame returns a fresh Ethernet/IPv4/UDP frame carrying d, checksums set.
func (f *framer) frame(d datagram) ([]byte, error) {
	src, dst := d.src.h, d.dst.h
	eth := &layers.Ethernet{SrcMAC: src.mac, DstMAC: dst.mac, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{
		Version:  4,
		IHL:      5,
		Id:       src.ipID,
		Flags:    layers.IPv4DontFragment,
		TTL:      src.ttl,
		Protocol: layers.IPProtocolUDP,
		SrcIP:    src.ip,
		DstIP:    dst.ip,
	}
	src.ipID++
	udp := &layers.UDP{SrcPort: layers.UDPPort(d.src.port), DstPort: layers.UDPPort(d.dst.port)}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		return nil, err
	}
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(f.buf, opts, eth, ip, udp, gopacket.Payload(d.payload)); err != nil {
		return nil, fmt.Errorf("sipgen: serialise %v -> %v: %w", src.ip, dst.ip, err)
	}
	return append([]byte(nil), f.buf.Bytes()...), nil
}
