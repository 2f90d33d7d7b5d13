package board

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// setupGadget builds configfs usb_gadget/fieldtap with one configuration
// holding one network function, binds it, and addresses the interface.
// It returns the function used ("ncm" or "ecm").
func setupGadget(g Gadget) (string, error) {
	pfx, err := netip.ParsePrefix(g.Address)
	if err != nil {
		return "", fmt.Errorf("address: %w", err)
	}
	root := filepath.Join(configfsRoot, gadgetName)
	if fn, ok := boundFunction(root); ok {
		// Bound already (by root before the privilege drop): only the
		// address is left, which CAP_NET_ADMIN may set.
		return fn, addrUp(gadgetIfname(root, fn, g.Interface), pfx)
	}
	if _, err := os.Stat(configfsRoot); err != nil {
		return "", fmt.Errorf("%s: %w (configfs mounted, libcomposite loaded?)", configfsRoot, err)
	}
	steps := []struct{ path, value string }{
		{"idVendor", gadgetVendor},
		{"idProduct", gadgetProduct},
		{"strings/0x409/manufacturer", "fieldtap"},
		{"strings/0x409/product", "fieldtap capture box"},
		{"configs/c.1/strings/0x409/configuration", "network"},
	}
	for _, s := range steps {
		if err := writeConfigfs(root, s.path, s.value); err != nil {
			return "", err
		}
	}
	fn := g.Function
	fdir := filepath.Join(root, "functions", fn+".usb0")
	if err := os.MkdirAll(fdir, 0o755); err != nil && fn == "ncm" {
		// No usb_f_ncm: fall back to ECM, which every host also knows.
		fn = "ecm"
		fdir = filepath.Join(root, "functions", "ecm.usb0")
		err = os.MkdirAll(fdir, 0o755)
		if err != nil {
			return "", fmt.Errorf("function: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("function: %w", err)
	}
	link := filepath.Join(root, "configs/c.1", filepath.Base(fdir))
	if err := os.Symlink(fdir, link); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("link function: %w", err)
	}
	udc := g.UDC
	if udc == "" {
		ents, err := os.ReadDir("/sys/class/udc")
		if err != nil || len(ents) == 0 {
			return "", fmt.Errorf("no USB device controller in /sys/class/udc")
		}
		udc = ents[0].Name()
	}
	if err := bindUDC(root, udc); err != nil {
		return "", err
	}
	ifname := gadgetIfname(root, fn, g.Interface)
	if err := addrUp(ifname, pfx); err != nil {
		return "", fmt.Errorf("%s: %w", ifname, err)
	}
	return fn, nil
}

// boundFunction reports the network function of a gadget already bound to
// a controller.
func boundFunction(root string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(root, "UDC"))
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return "", false
	}
	for _, fn := range []string{"ncm", "ecm"} {
		if _, err := os.Stat(filepath.Join(root, "configs/c.1", fn+".usb0")); err == nil {
			return fn, true
		}
	}
	return "", false
}

// gadgetIfname is the netdev the kernel made for the function (it says in
// the function's ifname file), or the profile's name.
func gadgetIfname(root, fn, fallback string) string {
	if b, err := os.ReadFile(filepath.Join(root, "functions", fn+".usb0", "ifname")); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" && s != "(unnamed net_device)" {
			return s
		}
	}
	return fallback
}

func writeConfigfs(root, rel, value string) error {
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, []byte(value), 0); err != nil {
		return fmt.Errorf("configfs %s: %w", rel, err)
	}
	return nil
}

// bindUDC binds the gadget, unbinding first: rebinding is the replug that
// cures dummy_hcd's occasional dead link (DESIGN.md §8) and is harmless
// on real controllers.
func bindUDC(root, udc string) error {
	p := filepath.Join(root, "UDC")
	if cur, _ := os.ReadFile(p); strings.TrimSpace(string(cur)) != "" {
		_ = os.WriteFile(p, []byte("\n"), 0)
	}
	if err := os.WriteFile(p, []byte(udc), 0); err != nil {
		return fmt.Errorf("bind UDC %s: %w", udc, err)
	}
	return nil
}

// addrUp adds pfx to the interface and sets it up (RTM_NEWADDR, then
// RTM_NEWLINK).
func addrUp(ifname string, pfx netip.Prefix) error {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return err
	}
	fam, alen := uint8(unix.AF_INET), 4
	if pfx.Addr().Is6() {
		fam, alen = unix.AF_INET6, 16
	}
	am := unix.IfAddrmsg{Family: fam, Prefixlen: uint8(pfx.Bits()), Index: uint32(ifi.Index)}
	body := append([]byte(nil), (*[unix.SizeofIfAddrmsg]byte)(unsafe.Pointer(&am))[:]...)
	a := pfx.Addr().AsSlice()
	for _, typ := range []uint16{unix.IFA_LOCAL, unix.IFA_ADDRESS} {
		rta := unix.RtAttr{Len: uint16(unix.SizeofRtAttr + alen), Type: typ}
		body = append(body, (*[unix.SizeofRtAttr]byte)(unsafe.Pointer(&rta))[:]...)
		body = append(body, a...)
	}
	if err := rtRequest(unix.RTM_NEWADDR, unix.NLM_F_CREATE|unix.NLM_F_REPLACE, body); err != nil {
		return fmt.Errorf("address %s: %w", pfx, err)
	}
	return setLinkFlags(ifi.Index, unix.IFF_UP, unix.IFF_UP)
}
