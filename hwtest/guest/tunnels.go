package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"fieldtap/hwtest"
)

// Attributes of IFLA_INFO_DATA for the gre family of links, from
// include/uapi/linux/if_tunnel.h (golang.org/x/sys/unix has none).
const (
	iflaGREIFlags      = 2
	iflaGREOFlags      = 3
	iflaGREIKey        = 4
	iflaGREOKey        = 5
	iflaGRELocal       = 6
	iflaGRERemote      = 7
	iflaGREERSPANIndex = 21
	iflaGREERSPANVer   = 22
	iflaGREERSPANDir   = 23
	iflaGREERSPANHwID  = 24
	// greSeqKey is GRE_SEQ|GRE_KEY in network order: what erspan links
	// must carry.
	greSeqKey = 0x3000
)

// tunnelLink is one tunnel device the kernel makes on the underlay
// device: its kind, the ERSPAN version for erspan, and the overlay
// subnet 10.78.N.0/24 whose .2 a static neighbour stands for.
type tunnelLink struct {
	name, kind string
	erspanVer  uint8
	overlay    byte
	v6         bool
}

var tunnelLinks = []tunnelLink{
	{name: "gt0", kind: "gretap", overlay: 1},
	{name: "es1", kind: "erspan", erspanVer: 1, overlay: 2},
	{name: "es2", kind: "erspan", erspanVer: 2, overlay: 3},
	{name: "gt6", kind: "ip6gretap", overlay: 4, v6: true},
}

// tunnels makes each tunnel link over underlay (hwtest.TunnelUnderlay,
// up with both addresses), sends n SIP INVITEs into each, and prints a
// TunnelsLine with the frames each link's kernel counters say it put on
// the underlay.
func tunnels(n int) error {
	c, err := netlink.Dial(unix.NETLINK_ROUTE, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, l := range tunnelLinks {
		if err := addTunnel(c, l); err != nil {
			return fmt.Errorf("%s %s: %w", l.kind, l.name, err)
		}
		// No IPv6 inside: router solicitations would add frames the
		// check does not send.
		if err := os.WriteFile("/proc/sys/net/ipv6/conf/"+l.name+"/disable_ipv6", []byte("1"), 0o644); err != nil {
			return err
		}
		for _, args := range [][]string{
			{"addr", "add", fmt.Sprintf("10.78.%d.1/24", l.overlay), "dev", l.name},
			{"link", "set", l.name, "up"},
		} {
			if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
				return fmt.Errorf("ip %s: %v %s", strings.Join(args, " "), err, out)
			}
		}
		ifi, err := net.InterfaceByName(l.name)
		if err != nil {
			return err
		}
		// The far end answers nothing: a static neighbour, so no ARP.
		if err := addNeighbour(c, ifi.Index, netip.AddrFrom4([4]byte{10, 78, l.overlay, 2}), net.HardwareAddr{2, 0, 10, 78, l.overlay, 2}); err != nil {
			return fmt.Errorf("neighbour on %s: %w", l.name, err)
		}
	}
	for _, l := range tunnelLinks {
		local := &net.UDPAddr{IP: net.IPv4(10, 78, l.overlay, 1), Port: 5060}
		remote := &net.UDPAddr{IP: net.IPv4(10, 78, l.overlay, 2), Port: 5060}
		conn, err := net.DialUDP("udp4", local, remote)
		if err != nil {
			return err
		}
		for i := range n {
			msg := fmt.Sprintf("INVITE sip:2002@%s SIP/2.0\r\nVia: SIP/2.0/UDP %s;branch=z9hG4bK%s%d\r\nFrom: <sip:1001@%s>;tag=t%d\r\nTo: <sip:2002@%s>\r\nCall-ID: %s-%d\r\nCSeq: 1 INVITE\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n",
				remote.IP, local, l.name, i, local.IP, i, remote.IP, l.name, i)
			if _, err := conn.Write([]byte(msg)); err != nil {
				conn.Close()
				return fmt.Errorf("INVITE into %s: %w", l.name, err)
			}
			time.Sleep(frameGap)
		}
		conn.Close()
	}
	time.Sleep(time.Second) // the counters settle
	var out []string
	for _, l := range tunnelLinks {
		b, err := os.ReadFile("/sys/class/net/" + l.name + "/statistics/tx_packets")
		if err != nil {
			return err
		}
		out = append(out, l.name+"="+strings.TrimSpace(string(b)))
	}
	fmt.Printf("%s sent=%d %s\n", hwtest.TunnelsLine, n, strings.Join(out, " "))
	return nil
}

// addTunnel is `ip link add NAME type KIND local … remote …` (with `seq
// key V erspan_ver V` for erspan), which busybox's ip cannot say.
func addTunnel(c *netlink.Conn, l tunnelLink) error {
	local, remote := hwtest.TunnelLocal.AsSlice(), hwtest.TunnelRemote.AsSlice()
	if l.v6 {
		local, remote = hwtest.TunnelLocal6.AsSlice(), hwtest.TunnelRemote6.AsSlice()
	}
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.IFLA_IFNAME, l.name)
	ae.Nested(unix.IFLA_LINKINFO, func(info *netlink.AttributeEncoder) error {
		info.String(unix.IFLA_INFO_KIND, l.kind)
		info.Nested(unix.IFLA_INFO_DATA, func(d *netlink.AttributeEncoder) error {
			d.Bytes(iflaGRELocal, local)
			d.Bytes(iflaGRERemote, remote)
			if l.kind == "erspan" {
				d.Bytes(iflaGREIFlags, binary.BigEndian.AppendUint16(nil, greSeqKey))
				d.Bytes(iflaGREOFlags, binary.BigEndian.AppendUint16(nil, greSeqKey))
				// One key per link: the kernel refuses a second link
				// with the same addresses and key.
				d.Bytes(iflaGREIKey, binary.BigEndian.AppendUint32(nil, uint32(l.erspanVer)))
				d.Bytes(iflaGREOKey, binary.BigEndian.AppendUint32(nil, uint32(l.erspanVer)))
				d.Uint8(iflaGREERSPANVer, l.erspanVer)
				if l.erspanVer == 1 {
					d.Uint32(iflaGREERSPANIndex, 12)
				} else {
					d.Uint8(iflaGREERSPANDir, 0)
					d.Uint16(iflaGREERSPANHwID, 4)
				}
			}
			return nil
		})
		return nil
	})
	attrs, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = c.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_NEWLINK, Flags: netlink.Request | netlink.Create | netlink.Excl | netlink.Acknowledge},
		Data:   append(make([]byte, unix.SizeofIfInfomsg), attrs...),
	})
	return err
}

// addNeighbour is `ip neigh add ADDR lladdr MAC dev IF nud permanent`.
func addNeighbour(c *netlink.Conn, ifindex int, addr netip.Addr, mac net.HardwareAddr) error {
	msg := make([]byte, unix.SizeofNdMsg)
	msg[0] = unix.AF_INET
	binary.NativeEndian.PutUint32(msg[4:], uint32(ifindex))
	binary.NativeEndian.PutUint16(msg[8:], unix.NUD_PERMANENT)
	ae := netlink.NewAttributeEncoder()
	ae.Bytes(unix.NDA_DST, addr.AsSlice())
	ae.Bytes(unix.NDA_LLADDR, mac)
	attrs, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = c.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_NEWNEIGH, Flags: netlink.Request | netlink.Create | netlink.Replace | netlink.Acknowledge},
		Data:   append(msg, attrs...),
	})
	return err
}
