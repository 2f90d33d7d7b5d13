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

	"fieldtap/drivers/capture"
	"fieldtap/drivers/slcan"
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

// glance is what the status page's test reads of /status.json.
type glance struct {
	Transmit struct {
		KeySwitch struct{ On bool } `json:"key_switch"`
		Sending   string            `json:"sending"`
	} `json:"transmit"`
	Ports []struct {
		Name          string   `json:"name"`
		State         string   `json:"state"`
		FramesPerS    *float64 `json:"frames_per_s"`
		LastFrameAgeS *float64 `json:"last_frame_age_s"`
		DropsTotal    uint64   `json:"drops_total"`
		DropsMinute   *uint64  `json:"drops_last_minute"`
	} `json:"ports"`
	Recorder *struct {
		State     string     `json:"state"`
		Dir       string     `json:"dir"`
		Segments  int        `json:"segments"`
		FreeBytes *int64     `json:"free_bytes"`
		Oldest    *time.Time `json:"oldest"`
	} `json:"recorder"`
	RecorderReason string `json:"recorder_reason"`
	Rules          *struct {
		Firing []struct {
			Name     string    `json:"name"`
			Severity string    `json:"severity"`
			Since    time.Time `json:"since"`
		} `json:"firing"`
		Pending int `json:"pending"`
		OK      int `json:"ok"`
		NoData  int `json:"no_data"`
	} `json:"rules"`
}

// glanceRules are the browser test's rules on the sim board: its J1708
// engine's PID 194 table lists PID 110 FMI 0 active in every pass
// (j1708gen.FaultPID; the J1939 engine's DM1 is cleared for 5 s by each
// pass's workshop, so it would not hold still), so coolant-hot fires;
// span0 captures, so span0-silent is ok; j1708 is no CAN port, so its
// load is no_data.
const glanceRules = `
[[rule]]
name = "coolant-hot"
kind = "j1587_fault"
code = 110
fmi = 0
op = "above"
value = 0
severity = "critical"
[[rule]]
name = "span0-silent"
kind = "port_silent"
port = "span0"
op = "above"
value = 0
severity = "warning"
[[rule]]
name = "j1708-load"
kind = "bus_load"
port = "j1708"
op = "above"
value = 0.8
severity = "info"
`

// TestStatusPageInBrowser opens the real daemon's page in headless
// Chromium at a phone's size and at a desktop's: it loads without a
// console error (a CSP violation or a missing resource would be one),
// and the values read back from the page are the box's: the sim board
// armed with no port able to send (it has no writer), each port
// capturing with its frames per second, last frame age and drops of the
// last minute and since start, the recorder recording with its oldest
// segment and free space, the rule firing with its severity and since
// and the others counted by state. It leaves a screenshot of each.
func TestStatusPageInBrowser(t *testing.T) {
	exe := chromium(t)
	rec := filepath.Join(t.TempDir(), "rec")
	d := startDaemon(t, armedConfig(t, "", fmt.Sprintf("[recorder]\nenabled = true\ndir = %q\n", rec)+glanceRules))
	var st glance
	// The first segment opens with the recorder's first write; a rate
	// needs two samples of the counters a second apart.
	for deadline := time.Now().Add(giveUp); ; time.Sleep(50 * time.Millisecond) {
		if err := json.Unmarshal(d.get(t, "/status.json"), &st); err != nil {
			t.Fatal(err)
		}
		rated := len(st.Ports) > 0
		for _, p := range st.Ports {
			rated = rated && p.FramesPerS != nil && *p.FramesPerS > 0
		}
		// The first fault table may come after the rules' first
		// evaluation: the next one, 5 s on, fires.
		fired := st.Rules != nil && len(st.Rules.Firing) > 0
		if st.Recorder == nil || (st.Recorder.Segments > 0 && st.Recorder.Oldest != nil && rated && fired) || time.Now().After(deadline) {
			break
		}
	}
	if !st.Transmit.KeySwitch.On || st.Transmit.Sending != "no port can send" {
		t.Fatalf("status.json transmit %+v, want the arm file's armed state and no port able to send", st.Transmit)
	}
	if r := st.Recorder; r == nil || r.State != "recording" || r.Dir != rec || r.Segments == 0 || r.Oldest == nil || r.FreeBytes == nil {
		t.Fatalf("status.json recorder %+v (%q), want recording into a segment in %s", r, st.RecorderReason, rec)
	}
	if r := st.Rules; r == nil || len(r.Firing) != 1 || r.Firing[0].Name != "coolant-hot" || r.Firing[0].Severity != "critical" || r.Firing[0].Since.IsZero() ||
		r.OK != 1 || r.Pending != 0 || r.NoData != 1 {
		t.Fatalf("status.json rules %+v, want coolant-hot firing, one ok, one no_data", r)
	}
	for _, p := range st.Ports {
		if p.State != "capturing" || p.FramesPerS == nil || *p.FramesPerS <= 0 || p.LastFrameAgeS == nil || p.DropsMinute == nil {
			t.Fatalf("status.json port %+v, want capturing with a rate, a last frame age and drops of the minute", p)
		}
	}
	for _, size := range []struct {
		name string
		w, h int64
	}{{"phone", 390, 844}, {"desktop", 1280, 800}} {
		t.Run(size.name, func(t *testing.T) { pageInBrowser(t, exe, d, st, size.w, size.h) })
	}
}

// pageInBrowser loads the page at w×h and reads its values back.
func pageInBrowser(t *testing.T, exe string, d *box, st glance, w, h int64) {
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
		chromedp.EmulateViewport(w, h),
		chromedp.Navigate(d.base+"/status"),
		chromedp.WaitVisible(chromedp.ID("arm-state")),
	); err != nil {
		t.Fatalf("chromium: %v\n%s", err, d.stderr)
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("the page has no %s: %v", sel, err)
		}
		return strings.TrimSpace(s)
	}
	arm, keySwitch, sending := text("#arm-state"), text("#key-switch"), text("#sending")
	recState, recStorage, recOldest, recFree := text("#recorder-state"), text("#recorder-storage"), text("#recorder-oldest"), text("#recorder-free")
	for _, p := range st.Ports {
		row := "#port-" + p.Name
		fps, age := strings.Fields(text(row+" .fps")), strings.Fields(text(row+" .age"))
		if v, err := strconv.ParseFloat(fps[0], 64); err != nil || v <= 0 {
			t.Errorf("%s frames/s %q, want a positive rate", p.Name, fps)
		}
		if len(age) != 3 || age[1] != "s" || age[2] != "ago" {
			t.Errorf("%s last frame %q, want \"N s ago\"", p.Name, age)
		} else if v, err := strconv.ParseFloat(age[0], 64); err != nil || v < 0 {
			t.Errorf("%s last frame age %q", p.Name, age[0])
		}
		if got := text(row + " .state"); got != "capturing" {
			t.Errorf("%s state %q, want capturing", p.Name, got)
		}
		if !strings.HasPrefix(text(row+" .since"), "since ") {
			t.Errorf("%s has no since", p.Name)
		}
		// Drops only grow: the page, read after the JSON, shows at least as many.
		minute, err1 := strconv.ParseUint(text(row+" .minute"), 10, 64)
		total, err2 := strconv.ParseUint(text(row+" .total"), 10, 64)
		if err1 != nil || err2 != nil || total < p.DropsTotal || minute > total {
			t.Errorf("%s drops %d (minute) / %d (total), json %d total: want numbers, the minute within the total", p.Name, minute, total, p.DropsTotal)
		}
	}
	f := st.Rules.Firing[0]
	counts := text("#rules-firing-n") + " " + text("#rules-pending-n") + " " + text("#rules-ok-n") + " " + text("#rules-nodata-n")
	row := "#rule-" + f.Name
	if name, sev, since := text(row+" .name"), text(row+" .severity"), text(row+" .since"); counts != "1 0 1 1" || name != f.Name || sev != f.Severity ||
		!strings.HasPrefix(since, f.Since.UTC().Format("01-02 15:04:05")+" UTC") {
		t.Errorf("rules on the page: %s firing/pending/ok/no data, %q %q since %q; want 1 0 1 1, %s %s since %v", counts, name, sev, since, f.Name, f.Severity, f.Since)
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
	t.Logf("screenshot %d×%d (%d bytes): %s", w, h, len(shot), path)
	if keep := os.Getenv("FIELDTAP_SCREENSHOT"); keep != "" {
		if err := os.WriteFile(strings.TrimSuffix(keep, ".png")+fmt.Sprintf("-%dx%d.png", w, h), shot, 0o644); err != nil {
			t.Error(err)
		}
	}
	if !strings.HasPrefix(arm, "TRANSMIT ARMED") || sending != "no port can send" || !strings.HasPrefix(keySwitch, "on") || !strings.Contains(title, "ARMED") {
		t.Errorf("page shows %q (%q), key switch %q, title %q; want the sim board armed with no port able to send", arm, sending, keySwitch, title)
	}
	oldest := st.Recorder.Oldest.UTC().Format("01-02 15:04:05")
	if !strings.HasPrefix(recState, "recording") || !strings.Contains(recStorage, "segments in "+st.Recorder.Dir) || !strings.HasPrefix(recOldest, oldest) || !strings.HasSuffix(recFree, "iB") {
		t.Errorf("recorder on the page: %q, %q, oldest %q, free %q; want recording into %s from %s with the disk's free space", recState, recStorage, recOldest, recFree, st.Recorder.Dir, oldest)
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
	_, device := servedCANable(t, nil)
	rec := filepath.Join(t.TempDir(), "rec")
	d := startDaemon(t, fmt.Sprintf("board = \"none\"\n[status]\nlisten = [\"127.0.0.1:0\"]\n[recorder]\nenabled = true\ndir = %q\n"+
		"[[port]]\nname = \"can1\"\ndriver = \"slcan\"\ndevice = %q\nbitrate = 500000\n", rec, device))
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
	src, err := slcan.New(slcan.Options{Name: "can1", Device: device, Bitrate: 500000})
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
