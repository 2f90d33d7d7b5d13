//go:build linux

package main

// The recorder's promises, tested on the real daemon: kill -9 loses at
// most recorder.FlushInterval (100 ms) per port, a graceful stop loses
// nothing, and after a restart the analysers answer with what came
// before, the gap shown. Two serial ports on pty pairs carry frames with
// counters: a J1708 line and an slcan adapter.

import (
	"context"
	bin "encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/drivers/slcan/slcantest"
	"fieldtap/drivers/wire"
	"fieldtap/services/recorder"
)

// frameEvery paces both ports: 200 frames a second each.
const frameEvery = 5 * time.Millisecond

// countedPorts is a J1708 line and an slcan adapter on ptys whose frames
// carry a counter (J1708: PID 190's two bytes; CAN: the first two data
// bytes), and the config that opens them with the recorder in dir.
type countedPorts struct {
	cfg   string
	j1708 *os.File
	ad    *slcantest.Adapter
	stop  context.CancelFunc
	wg    sync.WaitGroup
	mu    sync.Mutex
	sent  map[string]int
}

func newCountedPorts(t *testing.T, dir string) *countedPorts {
	t.Helper()
	jm, js, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	cm, cs, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	t.Cleanup(func() { jm.Close(); js.Close(); cm.Close(); cs.Close() })
	c := &countedPorts{j1708: jm, ad: slcantest.New(cm, slcantest.CANable), sent: map[string]int{}}
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	go c.ad.Serve(ctx)
	c.cfg = filepath.Join(t.TempDir(), "fieldtapd.toml")
	body := fmt.Sprintf("board = \"none\"\n[recorder]\nenabled = true\ndir = %q\n"+
		"[[port]]\nname = \"bus1\"\ndriver = \"j1708\"\ndevice = %q\n"+
		"[[port]]\nname = \"can1\"\ndriver = \"slcan\"\ndevice = %q\n", dir, js.Name(), cs.Name())
	if err := os.WriteFile(c.cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

func j1708Counted(n int) []byte {
	m := []byte{128, 190, byte(n), byte(n >> 8), 0}
	var s byte
	for _, b := range m[:4] {
		s += b
	}
	m[4] = -s
	return m
}

// start sends a counted frame on each port every frameEvery until stop,
// once the slcan port's capture session has opened (slcanCapturing).
func (c *countedPorts) start(t *testing.T, ctx context.Context, s *sdk.ClientSession) {
	t.Helper()
	select {
	case <-c.ad.Opened():
	case <-time.After(giveUp):
		t.Fatalf("slcan adapter never opened: %q", c.ad.Commands())
	}
	slcanCapturing(t, ctx, s, c.ad, "can1")
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for n := 0; ctx.Err() == nil; n++ {
			if _, err := c.j1708.Write(j1708Counted(n)); err != nil {
				return
			}
			if err := c.ad.Write([]byte(slcantest.FrameLine(0x18FEF100, true, false, []byte{byte(n), byte(n >> 8), 0, 0, 0, 0, 0, 0}, -1))); err != nil {
				return
			}
			c.mu.Lock()
			c.sent["bus1"], c.sent["can1"] = n+1, n+1
			c.mu.Unlock()
			time.Sleep(frameEvery)
		}
	}()
}

func (c *countedPorts) halt() {
	if c.stop != nil {
		c.stop()
		c.wg.Wait()
	}
}

// recordedCounters opens the directory as the next start would
// (recovering it) and returns each port's counters in recorded order and
// its recorded frames. J1708 on a pty has no idle gaps the driver can
// see when the reader falls behind: two messages read together also sum
// to zero, so one frame may carry several counted messages.
func recordedCounters(t *testing.T, dir string) (map[string][]int, map[string]int) {
	t.Helper()
	r, err := recorder.Open(recorder.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out, frames := map[string][]int{}, map[string]int{}
	_, err = r.Scan(context.Background(), recorder.Query{From: time.Unix(1, 0), To: time.Now().Add(time.Hour)}, func(f *recorder.Frame) error {
		frames[f.Port]++
		switch f.Link {
		case wire.LinkJ1708:
			for m := f.Data; len(m) >= 5 && m[1] == 190; m = m[5:] {
				out[f.Port] = append(out[f.Port], int(bin.LittleEndian.Uint16(m[2:])))
			}
		case wire.LinkCANSocketCAN:
			if _, data, err := wire.DecodeCAN(f.Data); err == nil && len(data) == 8 {
				out[f.Port] = append(out[f.Port], int(bin.LittleEndian.Uint16(data)))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, frames
}

// contiguous fails unless counters run without a repeat, and without a
// hole beyond the messages the port's driver counted as errors: a J1708
// framer on a pty sees only gaps and checksums, and on a loaded machine
// it loses a message now and then, counted, before anything is recorded.
// Every frame delivered must be on disk.
func contiguous(t *testing.T, port string, cs []int, driverErrors uint64) {
	t.Helper()
	holes := uint64(0)
	for i := 1; i < len(cs); i++ {
		switch {
		case cs[i] <= cs[i-1]:
			t.Errorf("%s: counter %d follows %d (frame %d): a recorded frame is repeated", port, cs[i], cs[i-1], i)
			return
		case cs[i] != cs[i-1]+1:
			holes++
			if holes > driverErrors {
				t.Errorf("%s: counter %d follows %d (frame %d): a recorded frame is missing (%d holes, %d driver errors)", port, cs[i], cs[i-1], i, holes, driverErrors)
				return
			}
		}
	}
	if holes > 0 {
		t.Logf("%s: %d holes in the counters, within the %d messages the driver counted as errors", port, holes, driverErrors)
	}
}

// portErrors sums each port's error counters from capture_status.
func portErrors(t *testing.T, ctx context.Context, s *sdk.ClientSession) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, p := range captureStatus(t, ctx, s).Data.Ports {
		for _, n := range p.Errors {
			out[p.Name] += n
		}
	}
	return out
}

// portFrames reads each port's delivered frame count from capture_status.
func portFrames(t *testing.T, ctx context.Context, s *sdk.ClientSession) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, p := range captureStatus(t, ctx, s).Data.Ports {
		out[p.Name] = p.Frames
		if len(p.Drops) > 0 {
			for k, v := range p.Drops {
				if v > 0 {
					t.Fatalf("port %s dropped %d frames (%s): the counters would not be contiguous", p.Name, v, k)
				}
			}
		}
	}
	return out
}

func connect(t *testing.T, ctx context.Context, url string, stderr *lockedBuffer) *sdk.ClientSession {
	t.Helper()
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	return s
}

// tsharkReadsEverySegment: every recorded frame opens in tshark.
func tsharkReadsEverySegment(t *testing.T, dir string, want int) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Log("tshark is not installed: segments checked with services/recorder only")
		return
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "fieldtap_*.pcapng"))
	sort.Strings(segs)
	n := 0
	for _, seg := range segs {
		out, err := exec.Command("tshark", "-r", seg, "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark -r %s: %v", seg, err)
		}
		n += strings.Count(string(out), "\n")
	}
	if n != want {
		t.Errorf("tshark reads %d frames in %d segments, the recorder %d", n, len(segs), want)
	}
}

// TestRecorderKill9 kills the daemon while both ports stream, restarts
// it, and checks the promises: every frame capture_status had counted
// 150 ms before the kill is on disk, contiguous, in tshark; after the
// restart the stores answer with those frames and the gap is shown.
func TestRecorderKill9(t *testing.T) {
	dir := t.TempDir()
	c := newCountedPorts(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*giveUp)
	defer cancel()
	cmd, url, stderr := startHTTP(t, "--config", c.cfg)
	s := connect(t, ctx, url, stderr)
	c.start(t, ctx, s)
	waitAllCounting(t, ctx, s, "bus1", "can1")
	time.Sleep(2 * time.Second)
	// Every frame counted here was delivered at least 150 ms before the
	// kill: more than FlushInterval, so all of them must be on disk.
	before := portFrames(t, ctx, s)
	time.Sleep(recorder.FlushInterval + 50*time.Millisecond)
	errs := portErrors(t, ctx, s)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	c.halt()
	s.Close()
	// What the kill left, as the next start finds it (a copy: the restart
	// below recovers and writes into the directory).
	left := copyDir(t, dir)

	// Restart: the analysers are refilled, and capture_status shows the gap.
	cmd, url, stderr = startHTTP(t, "--config", c.cfg)
	s = connect(t, ctx, url, stderr)
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "capture_status", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Data struct {
			Ports []struct {
				Name     string `json:"name"`
				Recorder *struct {
					State    string `json:"state"`
					Refilled *struct {
						Frames uint64 `json:"frames"`
					} `json:"refilled"`
					LastGap *struct {
						Reason    string            `json:"reason"`
						PortsLast map[string]string `json:"ports_last"`
					} `json:"last_gap"`
				} `json:"recorder"`
			} `json:"ports"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &st); err != nil {
		t.Fatal(err)
	}
	refilled := map[string]uint64{}
	for _, p := range st.Data.Ports {
		r := p.Recorder
		if r == nil || r.State != recorder.StateRecording || r.Refilled == nil || r.LastGap == nil ||
			r.LastGap.Reason != recorder.GapUncleanStop || r.LastGap.PortsLast[p.Name] == "" {
			t.Errorf("port %s after the restart: recorder %s: want recording, refilled, the unclean stop shown", p.Name, res.Content[0].(*sdk.TextContent).Text)
			continue
		}
		refilled[p.Name] = r.Refilled.Frames
	}
	// The stores answer with frames from before the kill.
	out, ok := callJSON(t, ctx, s, "can_frames", map[string]any{"port": "can1", "limit": 1})
	if items, _ := out["items"].([]any); !ok || len(items) != 1 {
		t.Errorf("can_frames after the restart: %v", out)
	}
	out, ok = callJSON(t, ctx, s, "j1708_messages", map[string]any{"mid": 128})
	if items, _ := out["items"].([]any); !ok || len(items) == 0 {
		t.Errorf("j1708_messages after the restart: %v", out)
	}
	s.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	got, frames := recordedCounters(t, left)
	total := 0
	for _, port := range []string{"bus1", "can1"} {
		cs := got[port]
		contiguous(t, port, cs, errs[port])
		c.mu.Lock()
		sent := c.sent[port]
		c.mu.Unlock()
		if uint64(frames[port]) < before[port] {
			t.Errorf("%s: %d frames on disk, but capture_status counted %d delivered 150 ms before the kill", port, frames[port], before[port])
		}
		if refilled[port] != uint64(frames[port]) {
			t.Errorf("%s: the restart refilled %d frames, %d are on disk", port, refilled[port], frames[port])
		}
		t.Logf("%s: %d frames counted 150 ms before kill -9, %d on disk; %d messages sent, %d on disk (%.0f ms of sending not on disk)",
			port, before[port], frames[port], sent, len(cs), float64(sent-len(cs))*float64(frameEvery)/float64(time.Millisecond))
		total += frames[port]
	}
	tsharkReadsEverySegment(t, left, total)
}

// copyDir copies a directory's regular files into a new one.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func callJSON(t *testing.T, ctx context.Context, s *sdk.ClientSession, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var out map[string]any
	json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &out)
	return out, !res.IsError
}

// TestRecorderGracefulStopLosesNothing: after SIGTERM every frame the
// ports delivered is on disk.
func TestRecorderGracefulStopLosesNothing(t *testing.T) {
	dir := t.TempDir()
	c := newCountedPorts(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	cmd, url, stderr := startHTTP(t, "--config", c.cfg)
	s := connect(t, ctx, url, stderr)
	defer s.Close()
	c.start(t, ctx, s)
	waitAllCounting(t, ctx, s, "bus1", "can1")
	time.Sleep(time.Second)
	c.halt()
	// Wait until the ports have delivered all they will, then stop.
	var delivered map[string]uint64
	for last, deadline := "", time.Now().Add(giveUp); ; time.Sleep(300 * time.Millisecond) {
		delivered = portFrames(t, ctx, s)
		if now := fmt.Sprint(delivered); now == last {
			break
		} else {
			last = now
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery never settled: %v", delivered)
		}
	}
	errs := portErrors(t, ctx, s)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
	}
	got, frames := recordedCounters(t, dir)
	total := 0
	for port, n := range delivered {
		contiguous(t, port, got[port], errs[port])
		if uint64(frames[port]) != n {
			t.Errorf("%s: %d frames on disk after a graceful stop, %d delivered", port, frames[port], n)
		}
		total += frames[port]
	}
	tsharkReadsEverySegment(t, dir, total)
}
