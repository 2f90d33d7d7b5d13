package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/creack/pty"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/slcan"
	"fieldtap/drivers/slcan/slcantest"
	"fieldtap/mcp/auth"
)

// chromium finds Debian's chromium, or skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not installed (Debian package chromium; .ci/run installs it)")
	return ""
}

// TestStatusPageInBrowser opens the real daemon's page in headless
// Chromium at a phone's size: it loads without a console error (a CSP
// violation or a missing resource would be one), shows the sim board
// armed and its recorder recording, and leaves a screenshot.
func TestStatusPageInBrowser(t *testing.T) {
	exe := chromium(t)
	rec := filepath.Join(t.TempDir(), "rec")
	d := startDaemon(t, armedConfig(t, "", fmt.Sprintf("[recorder]\nenabled = true\ndir = %q\n", rec)))
	var st struct {
		Transmit struct {
			KeySwitch struct{ On bool } `json:"key_switch"`
		} `json:"transmit"`
		Recorder *struct {
			State    string `json:"state"`
			Dir      string `json:"dir"`
			Segments int    `json:"segments"`
		} `json:"recorder"`
		RecorderReason string `json:"recorder_reason"`
	}
	// The first segment opens with the recorder's first write.
	for deadline := time.Now().Add(giveUp); ; time.Sleep(50 * time.Millisecond) {
		if err := json.Unmarshal(d.get(t, "/status.json"), &st); err != nil {
			t.Fatal(err)
		}
		if st.Recorder == nil || st.Recorder.Segments > 0 || time.Now().After(deadline) {
			break
		}
	}
	if !st.Transmit.KeySwitch.On {
		t.Fatalf("status.json: %+v, want the arm file's armed state", st)
	}
	if r := st.Recorder; r == nil || r.State != "recording" || r.Dir != rec || r.Segments == 0 {
		t.Fatalf("status.json recorder %+v (%q), want recording into a segment in %s", r, st.RecorderReason, rec)
	}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, giveUp)
	defer cancelT()

	// Subscribe before navigating: console calls, uncaught exceptions and
	// browser log entries (a blocked or missing resource) all arrive here.
	msgs := chromedp.Console(ctx)
	var problems []string
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				mu.Lock()
				problems = append(problems, string(m.Type)+": "+m.String()+" "+m.URL)
				mu.Unlock()
			}
		}
	}()
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844),
		chromedp.Navigate(d.base+"/status"),
		chromedp.WaitVisible(chromedp.ID("arm-state")),
	); err != nil {
		t.Fatalf("chromium: %v\n%s", err, d.stderr)
	}
	arm, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("arm-state")))
	if err != nil {
		t.Fatal(err)
	}
	keySwitch, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("key-switch")))
	if err != nil {
		t.Fatal(err)
	}
	recState, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("recorder-state")))
	if err != nil {
		t.Fatalf("the page has no recorder state: %v", err)
	}
	recStorage, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("recorder-storage")))
	if err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	// Late entries (the favicon, a CSP report) arrive after load.
	if err := chromedp.Do(ctx, chromedp.Sleep(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	path := filepath.Join(t.TempDir(), "status-page.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot (%d bytes): %s", len(shot), path)
	if keep := os.Getenv("FIELDTAP_SCREENSHOT"); keep != "" {
		if err := os.WriteFile(keep, shot, 0o644); err != nil {
			t.Error(err)
		}
	}
	if arm != "TRANSMIT ARMED" || !strings.HasPrefix(keySwitch, "on") || !strings.Contains(title, "ARMED") {
		t.Errorf("page shows %q, key switch %q, title %q; want the sim board armed", arm, keySwitch, title)
	}
	if !strings.HasPrefix(recState, "recording") || !strings.Contains(recStorage, "free on disk") || !strings.Contains(recStorage, "segments in "+rec) {
		t.Errorf("recorder on the page: %q, %q; want recording into %s with the disk's free space", recState, recStorage, rec)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("console problems: %v", problems)
	}
	if len(shot) < 1000 || string(shot[1:4]) != "PNG" {
		t.Errorf("screenshot is not a PNG (%d bytes)", len(shot))
	}
}

// TestMetricsOfTheDaemonPassPromtool pipes the real daemon's /metrics
// through Prometheus's checker.
func TestMetricsOfTheDaemonPassPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian package prometheus; .ci/run installs it)")
	}
	d := startDaemon(t, armedConfig(t, "", ""))
	var body []byte
	deadline := time.Now().Add(giveUp)
	for { // wait until the CAN port has a complete second of load
		body = d.get(t, "/metrics")
		if strings.Contains(string(body), `fieldtap_can_bus_load_ratio{port="can0"}`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(body))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	for _, want := range []string{"fieldtap_port_frames_total", "fieldtap_transmit_armed 1", "fieldtap_can_bus_load_ratio", `fieldtap_transmit_attempts_total{outcome="sent"} 0`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestStatusPageTakesTheMCPTokens: with a tokens file, the page and
// /metrics answer only a read token, as a bearer header or as the
// password a browser sends for its Basic prompt.
func TestStatusPageTakesTheMCPTokens(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(auth.HashToken("tech", "phone-secret")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, armedConfig(t, "", "[mcp]\ntokens_file = \""+tokens+"\"\n"))
	tests := []struct {
		name, path string
		auth       func(r *http.Request)
		code       int
		challenge  string
	}{
		{name: "no credential: the browser is asked", path: "/status", code: 401, challenge: "Basic"},
		{name: "wrong password", path: "/status", auth: func(r *http.Request) { r.SetBasicAuth("tech", "guess") }, code: 401},
		{name: "the token as Basic password", path: "/status", auth: func(r *http.Request) { r.SetBasicAuth("tech", "phone-secret") }, code: 200},
		{name: "metrics with a bearer token", path: "/metrics", auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer phone-secret") }, code: 200},
		{name: "json without one", path: "/status.json", code: 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.NewRequest("GET", d.base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.auth != nil {
				tc.auth(r)
			}
			res, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.code {
				t.Errorf("GET %s = %d, want %d", tc.path, res.StatusCode, tc.code)
			}
			if got := strings.Join(res.Header.Values("WWW-Authenticate"), " | "); !strings.Contains(got, tc.challenge) {
				t.Errorf("challenges %q lack %q", got, tc.challenge)
			}
		})
	}
}

// TestFreshBoxExportsEveryCauseAtZero: the first scrape of a box just
// started, an slcan adapter on a pty that sends no frame and a recorder,
// has a series for every drop cause and error reason the driver names
// (slcan.Source.Causes) and the hand-off's, each at 0 unless the port
// already counted it; one port_state series per state; the recorder's
// state, gaps, quota and free space. promtool checks the whole scrape.
func TestFreshBoxExportsEveryCauseAtZero(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	ad := slcantest.New(master, slcantest.CANable)
	serveCtx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	go ad.Serve(serveCtx)
	rec := filepath.Join(t.TempDir(), "rec")
	d := startDaemon(t, fmt.Sprintf("board = \"none\"\n[status]\nlisten = [\"127.0.0.1:0\"]\n[recorder]\nenabled = true\ndir = %q\n"+
		"[[port]]\nname = \"can1\"\ndriver = \"slcan\"\ndevice = %q\nbitrate = 500000\n", rec, slave.Name()))
	body := string(d.get(t, "/metrics"))
	var st struct {
		Ports []struct {
			Drops  map[string]uint64 `json:"drops"`
			Errors map[string]uint64 `json:"errors"`
		} `json:"ports"`
	}
	if err := json.Unmarshal(d.get(t, "/status.json"), &st); err != nil || len(st.Ports) != 1 {
		t.Fatalf("status.json: %v %+v", err, st)
	}
	src, err := slcan.New(slcan.Options{Name: "can1", Device: slave.Name(), Bitrate: 500000})
	if err != nil {
		t.Fatal(err)
	}
	drops, reasons := src.Causes()
	drops = append(drops, capture.DropHandoffFull, capture.DropUndecodable)
	// value finds a series' value in the scrape.
	value := func(series string) (uint64, bool) {
		i := strings.Index(body, "\n"+series+" ")
		if i < 0 {
			return 0, false
		}
		line := body[i+len(series)+2:]
		n, err := strconv.ParseUint(line[:strings.IndexByte(line, '\n')], 10, 64)
		return n, err == nil
	}
	check := func(series string, counted map[string]uint64, cause string) {
		got, ok := value(series)
		switch {
		case !ok:
			t.Errorf("no series %s on a fresh box", series)
		case got != 0 && got > counted[cause]:
			t.Errorf("%s = %d, status.json counts %d after it", series, got, counted[cause])
		}
	}
	for _, c := range drops {
		check(fmt.Sprintf(`fieldtap_port_drops_total{cause=%q,port="can1"}`, c), st.Ports[0].Drops, c)
	}
	for _, r := range reasons {
		check(fmt.Sprintf(`fieldtap_port_errors_total{port="can1",reason=%q}`, r), st.Ports[0].Errors, r)
	}
	for _, s := range []string{"capturing", "silent", "down", "gone", "restarting", "ended"} {
		if _, ok := value(fmt.Sprintf(`fieldtap_port_state{port="can1",state=%q}`, s)); !ok {
			t.Errorf("no port_state series for %s", s)
		}
	}
	for _, want := range []string{`fieldtap_recorder_state{state="recording"} 1`, "fieldtap_recorder_gaps_total 0",
		"fieldtap_recorder_quota_bytes ", "fieldtap_recorder_free_bytes "} {
		if !strings.Contains(body, "\n"+want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	t.Logf("can1: %d drop causes and %d error reasons exported", len(drops), len(reasons))
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
}
