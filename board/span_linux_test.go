package board

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// PrepareSpan on a veth: up, promiscuous, addresses gone, IPv6 off.
// Needs root and iproute2; the emulated board (hwtest) checks it too.
func TestPrepareSpanOnVeth(t *testing.T) {
	ip, err := exec.LookPath("ip")
	if err != nil || os.Getuid() != 0 {
		t.Skip("needs root and ip(8)")
	}
	name := fmt.Sprintf("ftspan%d", os.Getpid()%10000)
	run := func(args ...string) error {
		out, err := exec.Command(ip, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("link", "add", name, "type", "veth", "peer", "name", name+"p"); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { _ = run("link", "del", name) })
	if err := run("addr", "add", "198.51.100.7/24", "dev", name); err != nil {
		t.Fatal(err)
	}
	if o := PrepareSpan(name); o.State != Up {
		t.Fatalf("PrepareSpan: %v", o)
	}
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		t.Fatal(err)
	}
	if ifi.Flags&net.FlagUp == 0 {
		t.Error("link not up")
	}
	flags, _ := os.ReadFile("/sys/class/net/" + name + "/flags")
	var f uint64
	fmt.Sscanf(strings.TrimSpace(string(flags)), "0x%x", &f)
	if f&0x100 == 0 {
		t.Errorf("flags %s: not promiscuous", flags)
	}
	if addrs, _ := ifi.Addrs(); len(addrs) != 0 {
		t.Errorf("addresses left: %v", addrs)
	}
	if v, _ := os.ReadFile("/proc/sys/net/ipv6/conf/" + name + "/disable_ipv6"); strings.TrimSpace(string(v)) != "1" {
		t.Errorf("disable_ipv6 = %q", v)
	}
	// Twice is the same: the unprivileged daemon repeats root's bring-up.
	if o := PrepareSpan(name); o.State != Up {
		t.Errorf("second PrepareSpan: %v", o)
	}
}

func TestPrepareSpanNoInterface(t *testing.T) {
	if o := PrepareSpan(""); o.State != Skipped {
		t.Errorf("no interface: %v, want skipped", o)
	}
	if o := PrepareSpan("nosuchif0"); o.State != Failed || !strings.Contains(o.Reason, "no such") {
		t.Errorf("missing interface: %v, want failed naming it", o)
	}
}
