package hwtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/tools/freeport"
)

const (
	// bootGiveUp bounds boot to Ready: about 5 s warm under TCG, but a
	// loaded CI machine emulating arm64 can take many times that.
	bootGiveUp = 180 * time.Second
	// checkGiveUp bounds each check's wait for counts to move.
	checkGiveUp = 60 * time.Second
)

// TestEmulatedBoard boots the board and checks it from the host. It runs
// only when FIELDTAP_HWTEST=1 and FIELDTAP_HWTEST_ROOT names the extracted
// Debian packages (hwtest/run sets both).
func TestEmulatedBoard(t *testing.T) {
	if os.Getenv("FIELDTAP_HWTEST") != "1" {
		t.Skip("set FIELDTAP_HWTEST=1 (or run hwtest/run) to boot the emulated board")
	}
	root := os.Getenv("FIELDTAP_HWTEST_ROOT")
	qemu, err := exec.LookPath("qemu-system-aarch64")
	if err != nil || root == "" {
		t.Fatalf("needs qemu-system-aarch64 (%v) and FIELDTAP_HWTEST_ROOT (%q): run hwtest/run", err, root)
	}
	kver, err := FindKernel(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bins := buildGuest(t, dir)
	initrd := filepath.Join(dir, "initrd.cpio")
	files, err := FirmwareFiles()
	if err != nil {
		t.Fatal(err)
	}
	if err := (Image{Root: root, Kernel: kver, Binaries: bins, Init: InitScript(), Files: files}).Build(initrd); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(initrd)
	fd, _ := os.Stat(bins["fieldtapd"])
	t.Logf("initramfs %d KiB, kernel %s, fieldtapd linux/arm64 %d bytes (-s -w)", fi.Size()>>10, kver, fd.Size())

	disk := recorderDisk(t, dir)
	b := boot(t, qemu, filepath.Join(root, "boot", "vmlinuz-"+kver), initrd, dir, disk)
	t.Logf("boot to %q: %.1f s", Ready, b.bootTime.Seconds())
	t.Logf("guest: %s", strings.Join(b.console.grep("hwtest: "), " | "))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	endpoint := "http://" + b.mcpAddr + "/mcp"
	authOn := b.console.has("hwtest: auth on")
	t.Run("bearer token required", func(t *testing.T) {
		if !authOn {
			t.Skip("this fieldtapd has no --mcp-tokens-file")
		}
		resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("no token: HTTP %d, want 401", resp.StatusCode)
		}
	})
	hc := &http.Client{Transport: bearer{Token, http.DefaultTransport}}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "fieldtap-hwtest", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("MCP connect through hostfwd: %v", err)
	}
	defer cs.Close()

	t.Run("gpio contracts on PL061 via gpioioctl", func(t *testing.T) {
		for _, test := range []string{"TestArmSwitchOnChip", "TestConfirmButtonOnChip"} {
			if !b.console.has("--- PASS: " + test) {
				t.Errorf("%s did not pass in the guest:\n%s", test, strings.Join(b.console.grep(strings.TrimPrefix(test, "Test")), "\n"))
			}
			t.Logf("guest: %s", strings.Join(b.console.grep(test), " | "))
		}
	})
	t.Run("board bring-up and arm input in capture_status", func(t *testing.T) {
		boardUp(t, ctx, cs, "gpio")
		st := captureStatus(t, ctx, cs)
		for _, p := range st.board {
			t.Logf("board part %s: %s (%s)", p.Part, p.Outcome, p.Detail)
		}
		if st.arm.Input != "gpio" || st.arm.Where != ArmLine || st.arm.On {
			t.Errorf("transmit_arm %+v, want off, input gpio at %s", st.arm, ArmLine)
		}
		if p := st.part("gpio"); p == nil || !strings.Contains(p.Detail, "confirm input "+ConfirmLine) {
			t.Errorf("gpio bring-up %+v, want the confirm input %s named", p, ConfirmLine)
		}
	})
	t.Run("arm switch held over qtest", func(t *testing.T) {
		before := len(b.console.grep("transmit arm switch"))
		b.setArm(t, true)
		on := b.console.waitCount(t, "transmit arm switch", before+1, checkGiveUp)
		b.setArm(t, false)
		lines := b.console.waitCount(t, "transmit arm switch", before+2, checkGiveUp)
		if !strings.Contains(on[before], "armed=true") || !strings.Contains(lines[before+1], "armed=false") {
			t.Errorf("transitions %q, want armed then disarmed", lines[before:])
		}
		t.Logf("%s", strings.Join(lines[before:], " | "))
	})
	t.Run("span eth1 prepared, frames reach the kernel", func(t *testing.T) {
		boardUp(t, ctx, cs, "span eth1")
		sendSpan(t, b.spanAddr, 20)
		// Frames to a MAC that is not eth1's reach the kernel only in
		// promiscuous mode (QEMU's virtio-net filters otherwise).
		st := b.console.waitStat(t, "eth1_rx", 20, checkGiveUp)
		t.Logf("kernel: %v", st)
		flags, _ := strconv.ParseUint(strings.TrimPrefix(st["eth1_flags"], "0x"), 16, 32)
		if flags&iffPromisc == 0 || flags&iffUp == 0 || st["eth1_addrs"] != "0" || st["eth1_noipv6"] != "1" {
			t.Errorf("eth1 flags %#x addrs %s disable_ipv6 %s: want up, promiscuous, no address, IPv6 off",
				flags, st["eth1_addrs"], st["eth1_noipv6"])
		}
	})
	t.Run("span0 counts (capture_status)", func(t *testing.T) { portCheck(t, ctx, cs, "span0", 20) })
	t.Run("SIP call on the SPAN port becomes a dialog", func(t *testing.T) {
		sendSIP(t, b.spanAddr, sipCall())
		decoded(t, ctx, cs, "list_dialogs", map[string]any{"filter": "method == INVITE and final_code == 200"})
	})
	t.Run("remote SPAN: the kernel's GRE, ERSPAN II/III and ip6gretap links on the tun port", func(t *testing.T) {
		tunnelCheck(t, ctx, b, cs)
	})
	t.Run("can0 receives can1 on one kvaser bus (kernel)", func(t *testing.T) {
		st := b.console.waitStat(t, "can0_rx", 20, checkGiveUp)
		t.Logf("kernel: can0_rx=%s can1_tx=%s", st["can0_rx"], st["can1_tx"])
	})
	t.Run("can0 counts (capture_status)", func(t *testing.T) { portCheck(t, ctx, cs, "can0", 20) })
	t.Run("J1939 from can1 decoded on can0", func(t *testing.T) {
		decoded(t, ctx, cs, "can_frames", map[string]any{"port": "can0", "id": "CF00400"})
		decoded(t, ctx, cs, "j1939_inventory", map[string]any{})
	})
	t.Run("CAN FD on a vcan with mtu 72 beside the sja1000 port", func(t *testing.T) { fdCheck(t, ctx, cs) })
	// Before the transmit check: no plan waits, so each press is a mark.
	t.Run("marks: QMP-pulsed button, an ECU bit that follows the presses", func(t *testing.T) {
		marksCheck(t, ctx, b, cs)
	})
	t.Run("can0 link set down and up: restarted, captures again", func(t *testing.T) {
		linkCheck(t, ctx, b, cs)
	})
	t.Run("socketcan transmit on can0, armed by the key, confirmed by the button", func(t *testing.T) {
		transmitCheck(t, ctx, b, endpoint)
	})
	t.Run("slcan adapter played by the host", func(t *testing.T) {
		portCheck(t, ctx, cs, "slcan0", 10)
		t.Logf("adapter saw commands %q, sent %d frames", b.slcan.commands(), b.slcan.sent.Load())
	})
	t.Run("j1708 over pci-serial", func(t *testing.T) {
		sendJ1708(t, b.j1708Addr, 30)
		portCheck(t, ctx, cs, "j1708", 10)
		decoded(t, ctx, cs, "j1708_messages", map[string]any{"mid": 128})
	})
	t.Run("privileges dropped", func(t *testing.T) {
		st := b.console.waitStat(t, "ids", 0, checkGiveUp)
		// uid 1000 (fieldtap) with CapEff = CAP_NET_RAW|CAP_NET_ADMIN; the root parent only waits.
		if want := fmt.Sprintf("1000/%016x/", 1<<13|1<<12); !strings.Contains(st["ids"], want) {
			t.Errorf("fieldtapd uid/CapEff: %s, want a process with %s", st["ids"], want)
		}
		t.Logf("fieldtapd processes uid/CapEff/VmRSS: %s", st["ids"])
	})
	t.Run("usb gadget", func(t *testing.T) {
		p := boardUp(t, ctx, cs, "gadget usb0")
		st := b.console.waitStat(t, "usb0", 0, checkGiveUp)
		t.Logf("%v; capture_status: %s", st["usb0"], p.Detail)
	})
	t.Logf("capture_status:\n%s", captureStatus(t, ctx, cs).raw)
	// Near the end: it kills the daemon, and every session with it; the
	// init script's respawn loop starts it again.
	t.Run("killed mid-plan: can0 listen-only again after the restart", func(t *testing.T) {
		killCheck(t, ctx, b, endpoint)
	})
	// Last: it ends the board. The daemon restarted above, so it reads
	// the board through a session of its own.
	t.Run("power cut (QEMU killed) loses at most 1 s per port", func(t *testing.T) {
		pc, _ := txClient(t, ctx, endpoint)
		defer pc.Close()
		powerCut(t, ctx, pc, b, disk, dir)
	})
}

// Interface flags from linux/if.h, as /sys/class/net/IF/flags shows them.
const (
	iffUp      = 0x1
	iffPromisc = 0x100
)

// bearer adds the hwtest token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// buildGuest cross-builds what runs in the guest.
func buildGuest(t *testing.T, dir string) map[string]string {
	t.Helper()
	bins := map[string]string{}
	for _, b := range []struct{ name, args string }{
		{"fieldtapd", "build -trimpath -ldflags=-s\x00-w -o OUT ../firmware/cmd/fieldtapd"},
		{"guest", "build -trimpath -o OUT ./guest"},
		{"board.test", "test -c -tags hwtest -o OUT ../board"},
	} {
		out := filepath.Join(dir, b.name)
		args := strings.Fields(strings.ReplaceAll(b.args, "OUT", out))
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "\x00", " ")
		}
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", b.args, err, o)
		}
		bins[b.name] = out
	}
	return bins
}

type board struct {
	cmd                          *exec.Cmd
	console                      *console
	keys                         io.Writer // QEMU's stdin: what the host types on the guest's console
	qmpPath, qtestPath           string
	qtOnce                       sync.Once
	qtConn                       *qtest
	qtErr                        error
	mcpAddr, spanAddr, j1708Addr string
	slcanAddr                    string
	slcan                        *slcanAdapter
	bootTime                     time.Duration
}

func port(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }

// boot starts QEMU with the ports of DESIGN.md §7, and the recorder's
// disk when disk is set, and waits for Ready.
func boot(t *testing.T, qemu, kernel, initrd, dir, disk string) *board {
	t.Helper()
	b := &board{
		qmpPath: filepath.Join(dir, "qmp.sock"), qtestPath: filepath.Join(dir, "qtest.sock"),
		mcpAddr: freeport.Addr(t, "tcp"), spanAddr: freeport.Addr(t, "udp"), j1708Addr: freeport.Addr(t, "tcp"),
	}
	spanOut := freeport.Addr(t, "udp") // where QEMU sends what eth1 transmits; nothing should arrive
	b.slcanAddr = freeport.Addr(t, "tcp")
	args := []string{
		"-M", "virt", "-cpu", "cortex-a53", "-m", "512", "-smp", "2",
		"-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot",
		"-kernel", kernel, "-initrd", initrd,
		"-append", "console=ttyAMA0 panic=-1 loglevel=4",
		"-qmp", "unix:" + b.qmpPath + ",server=on,wait=off",
		"-qtest", "unix:" + b.qtestPath + ",server=on,wait=off",
		"-object", "can-bus,id=canbus0",
		"-device", "kvaser_pci,canbus=canbus0",
		"-device", "kvaser_pci,canbus=canbus0",
		"-chardev", "socket,id=j1708,host=127.0.0.1,port=" + port(b.j1708Addr) + ",server=on,wait=off",
		"-device", "pci-serial,chardev=j1708",
		"-chardev", "socket,id=slcan,host=127.0.0.1,port=" + port(b.slcanAddr) + ",server=on,wait=off",
		"-device", "pci-serial,chardev=slcan",
		"-netdev", "user,id=net0,restrict=on,hostfwd=tcp:" + b.mcpAddr + "-:" + strconv.Itoa(MCPPort),
		"-device", "virtio-net-pci,netdev=net0,romfile=",
		"-netdev", "socket,id=span,udp=" + spanOut + ",localaddr=" + b.spanAddr,
		"-device", "virtio-net-pci,netdev=span,romfile=",
	}
	if disk != "" {
		// cache=writeback: what the guest wrote reaches the image file
		// (the host's page cache) at once, as a disk's own cache would
		// keep it through a kill of QEMU; what the guest kept in its page
		// cache without fdatasync is lost with QEMU, as with a power cut.
		args = append(args, "-drive", "file="+disk+",if=none,format=raw,cache=writeback,id=rec", "-device", "virtio-blk-pci,drive=rec")
	}
	b.cmd = exec.Command(qemu, args...)
	out, err := b.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	b.cmd.Stderr = b.cmd.Stdout
	if b.keys, err = b.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "console.log"))
	if err != nil {
		t.Fatal(err)
	}
	b.console = newConsole(io.TeeReader(out, logf))
	start := time.Now()
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Connect the slcan adapter before the guest opens the tty: QEMU drops
	// what a chardev sends while nobody is connected.
	b.slcan = playSlcan(t, b.slcanAddr)
	t.Cleanup(func() {
		if b.qtConn != nil {
			b.qtConn.close()
		}
		_ = b.cmd.Process.Kill()
		_ = b.cmd.Wait()
		if t.Failed() {
			t.Logf("console:\n%s", b.console.tail(80))
		}
	})
	if !b.console.wait(Ready, bootGiveUp) {
		t.Fatalf("no %q within %v (or QEMU exited)", Ready, bootGiveUp)
	}
	b.bootTime = time.Since(start)
	return b
}

// qmp runs one QMP command: greeting, qmp_capabilities, the command.
func (b *board) qmp(command string) error {
	q, err := dialQMP(b.qmpPath)
	if err != nil {
		return err
	}
	defer q.close()
	_, err = q.call(command, nil)
	return err
}

// console collects the guest's serial output line by line.
type console struct {
	mu    sync.Mutex
	lines []string
	grew  chan struct{}
	eof   chan struct{} // closed when QEMU's output ends
}

func newConsole(r io.Reader) *console {
	c := &console{grew: make(chan struct{}, 1), eof: make(chan struct{})}
	go func() {
		defer close(c.eof)
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 64<<10), 1<<20)
		for s.Scan() {
			c.mu.Lock()
			c.lines = append(c.lines, strings.TrimRight(s.Text(), "\r"))
			c.mu.Unlock()
			select {
			case c.grew <- struct{}{}:
			default:
			}
		}
	}()
	return c
}

func (c *console) grep(sub string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, l := range c.lines {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

func (c *console) has(sub string) bool { return len(c.grep(sub)) > 0 }

// size is how many lines the console holds now: a mark for since.
func (c *console) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

// since returns the lines from mark on that contain any of subs.
func (c *console) since(mark int, subs ...string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, l := range c.lines[min(mark, len(c.lines)):] {
		for _, s := range subs {
			if strings.Contains(l, s) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

func (c *console) tail(n int) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines[max(0, len(c.lines)-n):], "\n")
}

func (c *console) wait(sub string, d time.Duration) bool {
	deadline := time.After(d)
	for !c.has(sub) {
		select {
		case <-c.grew:
		case <-c.eof:
			return c.has(sub)
		case <-deadline:
			return false
		}
	}
	return true
}

func (c *console) waitCount(t *testing.T, sub string, n int, d time.Duration) []string {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		if got := c.grep(sub); len(got) >= n {
			return got
		} else if time.Now().After(deadline) {
			t.Fatalf("%d lines with %q, want %d: %v", len(got), sub, n, got)
		}
	}
}

var statField = regexp.MustCompile(`(\w+)=(\S*(?: [0-9./]+)?)`)

// waitStat waits for a STAT line whose key is above min (or, for a
// non-numeric key, is not empty) and returns that line's fields.
func (c *console) waitStat(t *testing.T, key string, min int, d time.Duration) map[string]string {
	t.Helper()
	var last map[string]string
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		stats := c.grep(StatLine)
		if len(stats) == 0 {
			continue
		}
		last = map[string]string{}
		for _, m := range statField.FindAllStringSubmatch(stats[len(stats)-1], -1) {
			last[m[1]] = m[2]
		}
		v := last[key]
		if n, err := strconv.Atoi(v); (err == nil && n >= min) || (err != nil && v != "") {
			return last
		}
	}
	t.Fatalf("kernel counter %s never reached %d: %v", key, min, last)
	return nil
}

// boardPart and armStatus are capture_status's board and transmit_arm.
type boardPart struct {
	Part    string `json:"part"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
}

type armStatus struct {
	On      bool   `json:"on"`
	Input   string `json:"input"`
	Where   string `json:"where"`
	Changes uint64 `json:"changes"`
}

type portStatus struct {
	Name         string            `json:"name"`
	Frames       uint64            `json:"frames"`
	Live         bool              `json:"live"`
	StoppedEarly string            `json:"stopped_early"`
	Errors       map[string]uint64 `json:"errors"`
	Restarts     uint64            `json:"restarts"`
	LastError    string            `json:"last_error"`
	State        string            `json:"state"`
	StateSince   *time.Time        `json:"state_since"`
	Tunnels      map[string]uint64 `json:"tunnels"`
}

type status struct {
	ports []portStatus
	board []boardPart
	arm   armStatus
	raw   string
}

// part returns the bring-up part named name, or nil.
func (s status) part(name string) *boardPart {
	for i := range s.board {
		if s.board[i].Part == name {
			return &s.board[i]
		}
	}
	return nil
}

func captureStatus(t *testing.T, ctx context.Context, cs *sdk.ClientSession) status {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "capture_status", Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("capture_status: %v %+v", err, res)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	var env struct {
		Data struct {
			Ports       []portStatus `json:"ports"`
			Board       []boardPart  `json:"board"`
			TransmitArm armStatus    `json:"transmit_arm"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		t.Fatal(err)
	}
	return status{ports: env.Data.Ports, board: env.Data.Board, arm: env.Data.TransmitArm, raw: text}
}

// portCheck waits until capture_status counts at least min frames on the
// port. A port the profile names whose driver is not in this build is
// reported skipped by the daemon; the check skips with that reason.
func portCheck(t *testing.T, ctx context.Context, cs *sdk.ClientSession, name string, min uint64) {
	t.Helper()
	for deadline := time.Now().Add(checkGiveUp); ; time.Sleep(250 * time.Millisecond) {
		var p *portStatus
		st := captureStatus(t, ctx, cs)
		for i := range st.ports {
			if st.ports[i].Name == name {
				p = &st.ports[i]
			}
		}
		switch {
		case p == nil:
			t.Fatalf("capture_status has no port %s: %s", name, st.raw)
		case strings.HasPrefix(p.StoppedEarly, "skipped"):
			t.Skipf("capture_status: %s %s", name, p.StoppedEarly)
		case p.Frames >= min:
			t.Logf("capture_status: %s frames=%d live=%v", name, p.Frames, p.Live)
			return
		case time.Now().After(deadline):
			t.Fatalf("capture_status: %s frames=%d, want >= %d (%s)", name, p.Frames, min, p.StoppedEarly)
		}
	}
}

// sendSpan sends n SIP OPTIONS requests in Ethernet frames to QEMU's
// socket netdev, addressed to a MAC that is not the guest's.
func sendSpan(t *testing.T, addr string, n int) {
	t.Helper()
	var msgs []string
	for i := 0; i < n; i++ {
		msgs = append(msgs, fmt.Sprintf("OPTIONS sip:probe@192.0.2.20 SIP/2.0\r\nVia: SIP/2.0/UDP 192.0.2.10:5060;branch=z9hG4bK-hw%d\r\n"+
			"From: <sip:hwtest@192.0.2.10>;tag=hw%d\r\nTo: <sip:probe@192.0.2.20>\r\nCall-ID: hwtest-%d@192.0.2.10\r\n"+
			"CSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n", i, i, i))
	}
	sendSIP(t, addr, msgs)
}

// sipCall is one complete call: INVITE, 200, ACK, BYE, 200.
func sipCall() []string {
	const (
		callID = "hwtest-call-1@192.0.2.10"
		from   = "From: \"hwtest\" <sip:alice@192.0.2.10>;tag=a1\r\n"
		to     = "To: <sip:bob@192.0.2.20>\r\n"
		toTag  = "To: <sip:bob@192.0.2.20>;tag=b1\r\n"
	)
	msg := func(start, via, to, cseq string) string {
		return start + "\r\nVia: SIP/2.0/UDP 192.0.2.10:5060;branch=" + via + "\r\n" + from + to +
			"Call-ID: " + callID + "\r\nCSeq: " + cseq + "\r\nContact: <sip:alice@192.0.2.10>\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n"
	}
	return []string{
		msg("INVITE sip:bob@192.0.2.20 SIP/2.0", "z9hG4bK-inv", to, "1 INVITE"),
		msg("SIP/2.0 200 OK", "z9hG4bK-inv", toTag, "1 INVITE"),
		msg("ACK sip:bob@192.0.2.20 SIP/2.0", "z9hG4bK-ack", toTag, "1 ACK"),
		msg("BYE sip:bob@192.0.2.20 SIP/2.0", "z9hG4bK-bye", toTag, "2 BYE"),
		msg("SIP/2.0 200 OK", "z9hG4bK-bye", toTag, "2 BYE"),
	}
}

// sendSIP sends each message in its own Ethernet/IPv4/UDP frame.
func sendSIP(t *testing.T, addr string, msgs []string) {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, sip := range msgs {
		src, dst := net.IP{192, 0, 2, 10}, net.IP{192, 0, 2, 20}
		if strings.HasPrefix(sip, "SIP/2.0") { // responses travel back
			src, dst = dst, src
		}
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src, DstIP: dst}
		udp := &layers.UDP{SrcPort: 5060, DstPort: 5060}
		_ = udp.SetNetworkLayerForChecksum(ip)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, gopacket.Payload(sip)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// decoded waits until tool answers ok with at least one row: list items,
// or a non-empty array in data.
func decoded(t *testing.T, ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any) {
	t.Helper()
	var text string
	for deadline := time.Now().Add(checkGiveUp); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if len(res.Content) == 0 {
			continue
		}
		text = res.Content[0].(*sdk.TextContent).Text
		var env struct {
			OK    bool                       `json:"ok"`
			Items []json.RawMessage          `json:"items"`
			Data  map[string]json.RawMessage `json:"data"`
		}
		if json.Unmarshal([]byte(text), &env) != nil || !env.OK {
			continue
		}
		rows := len(env.Items)
		for _, v := range env.Data {
			var arr []json.RawMessage
			if json.Unmarshal(v, &arr) == nil {
				rows += len(arr)
			}
		}
		if rows > 0 {
			first := text
			if len(first) > 300 {
				first = first[:300] + "…"
			}
			t.Logf("%s: %d rows: %s", tool, rows, first)
			return
		}
	}
	t.Fatalf("%s never returned a row; last answer: %s", tool, text)
}

// sendJ1708 writes n J1587 engine-speed messages (MID 128, PID 190) into
// the pci-serial chardev, 20 ms apart so the driver sees the idle gaps.
func sendJ1708(t *testing.T, addr string, n int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < n; i++ {
		rpm := uint16(3200 + i) // 0.25 rpm/bit
		msg := []byte{128, 190, byte(rpm), byte(rpm >> 8)}
		var sum byte
		for _, b := range msg {
			sum += b
		}
		msg = append(msg, -sum) // all bytes sum to 0 mod 256
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// slcanAdapter plays a Lawicel adapter on the guest's second pci-serial:
// it acknowledges every command with CR and, once the channel is opened
// (O, or L for listen-only), streams EEC1 frames.
type slcanAdapter struct {
	mu   sync.Mutex
	cmds []string
	sent atomic.Int64
}

// slcanFrames is how many frames the adapter sends after each open.
const slcanFrames = 50

func playSlcan(t *testing.T, addr string) *slcanAdapter {
	a := &slcanAdapter{}
	var c net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("slcan chardev: %v", err)
		}
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		r := bufio.NewReader(c)
		for {
			cmd, err := r.ReadString('\r')
			if err != nil {
				return
			}
			cmd = strings.TrimSpace(cmd)
			a.mu.Lock()
			a.cmds = append(a.cmds, cmd)
			a.mu.Unlock()
			if _, err := c.Write([]byte("\r")); err != nil {
				return
			}
			if cmd == "O" || cmd == "L" {
				go func() {
					for i := 0; i < slcanFrames; i++ {
						// Extended id 0CF00400, 8 bytes: EEC1 from address 0.
						if _, err := fmt.Fprintf(c, "T0CF004008F07D7D%04X00F07D\r", 0x1900+i); err != nil {
							return
						}
						a.sent.Add(1)
						time.Sleep(10 * time.Millisecond)
					}
				}()
			}
		}
	}()
	return a
}

func (a *slcanAdapter) commands() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.cmds...)
}
