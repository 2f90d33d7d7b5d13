package board

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// prepareSpan: link flags and addresses over rtnetlink, IPv6 through its
// sysctl (which also drops the link-local address and stops DAD and RS).
func prepareSpan(ifname string) error {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return err
	}
	if err := disableIPv6(ifname); err != nil {
		return err
	}
	if err := flushAddrs(ifi.Index); err != nil {
		return fmt.Errorf("remove addresses: %w", err)
	}
	flags := uint32(unix.IFF_UP | unix.IFF_PROMISC)
	if err := setLinkFlags(ifi.Index, flags, flags); err != nil {
		return fmt.Errorf("link up, promiscuous: %w", err)
	}
	return nil
}

func disableIPv6(ifname string) error {
	p := filepath.Join("/proc/sys/net/ipv6/conf", ifname, "disable_ipv6")
	if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == "1" {
		return nil // done already, by root before the privilege drop
	}
	if err := os.WriteFile(p, []byte("1"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("disable IPv6: %w", err)
	}
	return nil // no such file: the kernel has no IPv6 at all
}

// setLinkFlags is `ip link set IF up promisc on` as one RTM_NEWLINK.
func setLinkFlags(index int, flags, change uint32) error {
	msg := unix.IfInfomsg{Family: unix.AF_UNSPEC, Index: int32(index), Flags: flags, Change: change}
	return rtRequest(unix.RTM_NEWLINK, 0, (*[unix.SizeofIfInfomsg]byte)(unsafe.Pointer(&msg))[:])
}

// flushAddrs deletes every address on the link, IPv4 and IPv6.
func flushAddrs(index int) error {
	rib, err := syscall.NetlinkRIB(unix.RTM_GETADDR, unix.AF_UNSPEC)
	if err != nil {
		return err
	}
	msgs, err := syscall.ParseNetlinkMessage(rib)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if m.Header.Type != unix.RTM_NEWADDR || len(m.Data) < unix.SizeofIfAddrmsg {
			continue
		}
		am := (*unix.IfAddrmsg)(unsafe.Pointer(&m.Data[0]))
		if int(am.Index) != index {
			continue
		}
		// Deleting needs the header and the IFA_LOCAL/IFA_ADDRESS attributes as listed.
		if err := rtRequest(unix.RTM_DELADDR, 0, m.Data); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
			return err
		}
	}
	return nil
}

// rtRequest sends one rtnetlink request and waits for its acknowledgement.
func rtRequest(typ uint16, flags uint16, body []byte) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	hdr := unix.NlMsghdr{
		Len:   uint32(unix.SizeofNlMsghdr + len(body)),
		Type:  typ,
		Flags: unix.NLM_F_REQUEST | unix.NLM_F_ACK | flags,
		Seq:   1,
	}
	req := append((*[unix.SizeofNlMsghdr]byte)(unsafe.Pointer(&hdr))[:], body...)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, os.Getpagesize())
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Header.Type != unix.NLMSG_ERROR || len(m.Data) < 4 {
				continue
			}
			if code := *(*int32)(unsafe.Pointer(&m.Data[0])); code != 0 {
				return unix.Errno(-code)
			}
			return nil
		}
	}
}
