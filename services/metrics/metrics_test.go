package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"

	"fieldtap/drivers/wire"
	"fieldtap/services/budget"
	"fieldtap/services/canbus"
	"fieldtap/services/ports"
	"fieldtap/services/recorder"
	"fieldtap/services/ring"
	"fieldtap/services/transmit"
)

type fakePorts struct{ st []ports.Status }

func (f fakePorts) Snapshot() []ports.Status { return f.st }
func (f fakePorts) Arm() ports.Arm           { return ports.Arm{On: true, Input: ports.ArmInputFile} }

type fakeExporter struct{ st ExporterStats }

func (f fakeExporter) ExporterStats() ExporterStats { return f.st }

type fakeRecorder struct{ st recorder.Status }

func (f fakeRecorder) Status() recorder.Status { return f.st }

// recording is a recorder with two segments since t0 and one gap.
func recording() recorder.Status {
	free, oldest := int64(5<<30), t0
	return recorder.Status{State: recorder.StateRecording, Bytes: 1 << 20, QuotaBytes: 1 << 30, FreeBytes: &free,
		Segments: 2, Oldest: &oldest, GapsTotal: 1}
}

type fakeMCP uint64

func (f fakeMCP) AuditRecords() uint64 { return uint64(f) }
func (f fakeMCP) ToolCalls() []ToolCalls {
	return []ToolCalls{{Tool: "can_frames", Outcome: "ok", Calls: 5}, {Tool: "unknown", Outcome: "refused", Calls: 2}}
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sources is a box with one CAN port at a known load, a transmitter
// that refused one execution, and one exporter.
func sources(t *testing.T) Sources {
	t.Helper()
	cs, _ := canbus.New(ring.Limits{Items: 1000, Bytes: 1 << 20})
	p, err := cs.Port("can0", 250_000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 { // two seconds of 10 frames
		p.Add(t0.Add(time.Duration(i)*100*time.Millisecond), 0x18FEF100|wire.CANEFF, make([]byte, 8))
	}
	oc := CountTransmit(nil)
	tx, err := transmit.New(transmit.Options{Ports: []transmit.Port{{Name: "can0", Medium: transmit.MediumCAN, Bitrate: 250_000}}, Audit: oc})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := transmit.Caller{Via: transmit.ViaCLI, Transport: "terminal"}
	plan, err := tx.Plan(ctx, c, transmit.Spec{Port: "can0", Tool: "test", Summary: "one frame",
		Frames: []transmit.Frame{{ID: 0x18EA00F9 | wire.CANEFF, Data: []byte{0xEC, 0xFE, 0x00}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Execute(ctx, c, plan.ID, true, transmit.Confirmation{}); err == nil {
		t.Fatal("a port without transmit = true sent")
	}
	return Sources{
		Ports: fakePorts{st: []ports.Status{{Name: "can0", Kind: "can", Frames: 20, Bytes: 320,
			Drops:  map[string]uint64{"handoff_full": 2},
			Errors: map[string]uint64{},
			Store:  budget.Use{Store: "can_frames", Port: "can0", Items: 20, Bytes: 960, MaxItems: 1000, MaxBytes: 48000}}}},
		CAN: cs, Transmit: tx, Outcomes: oc, MCP: fakeMCP(7), Recorder: fakeRecorder{recording()},
		Exporters: []Exporter{fakeExporter{ExporterStats{Name: "hep", Sent: 5, SentBytes: 900, Dropped: map[string]uint64{"queue_full": 1}, Connected: true}}},
		Now:       func() time.Time { return t0.Add(10 * time.Second) },
	}
}

func TestCollector(t *testing.T) {
	s := sources(t)
	load := float64(10*canbus.FrameBits(true, 8)) / 250_000
	tests := []struct {
		name, want string
		metric     string
	}{
		{name: "frames", metric: "fieldtap_port_frames_total", want: `fieldtap_port_frames_total{kind="can",port="can0"} 20`},
		{name: "drops by cause", metric: "fieldtap_port_drops_total", want: `fieldtap_port_drops_total{cause="handoff_full",port="can0"} 2`},
		{name: "store", metric: "fieldtap_store_limit_bytes", want: `fieldtap_store_limit_bytes{port="can0"} 48000`},
		{name: "bus load", metric: "fieldtap_can_bus_load_ratio", want: `fieldtap_can_bus_load_ratio{port="can0"} ` + prometheusFloat(load)},
		{name: "refused at the port gate", metric: "fieldtap_transmit_refusals_total", want: `fieldtap_transmit_refusals_total{gate="port_config"} 1`},
		{name: "attempt outcome", metric: "fieldtap_transmit_attempts_total", want: `fieldtap_transmit_attempts_total{outcome="refused"} 1`},
		{name: "no send counted", metric: "fieldtap_transmit_attempts_total", want: `fieldtap_transmit_attempts_total{outcome="sent"} 0`},
		{name: "plans", metric: "fieldtap_transmit_plans_total", want: `fieldtap_transmit_plans_total 1`},
		{name: "armed", metric: "fieldtap_transmit_armed", want: `fieldtap_transmit_armed 1`},
		{name: "audit records", metric: "fieldtap_mcp_audit_records_total", want: `fieldtap_mcp_audit_records_total 7`},
		{name: "calls by tool", metric: "fieldtap_mcp_calls_total", want: `fieldtap_mcp_calls_total{outcome="ok",tool="can_frames"} 5`},
		{name: "refusals by tool", metric: "fieldtap_mcp_calls_total", want: `fieldtap_mcp_calls_total{outcome="refused",tool="unknown"} 2`},
		{name: "exporter drops", metric: "fieldtap_exporter_dropped_total", want: `fieldtap_exporter_dropped_total{cause="queue_full",exporter="hep"} 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exp := only(collected(s), tc.metric)
			if !strings.Contains(string(exp), tc.want+"\n") {
				t.Errorf("%s lacks %q:\n%s", tc.metric, tc.want, exp)
			}
		})
	}
	problems, err := promlint.New(strings.NewReader(collected(s))).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// collected is the collector's exposition for s, without the Go and
// process series.
func collected(s Sources) string {
	e := newExposition()
	newCollector(s).collect(e)
	var b strings.Builder
	e.write(&b)
	return b.String()
}

// only is the lines of exp about the families named.
func only(exp string, names ...string) string {
	var b strings.Builder
	for l := range strings.Lines(exp) {
		name := strings.TrimPrefix(strings.TrimPrefix(l, "# HELP "), "# TYPE ")
		if i := strings.IndexAny(name, " {"); i >= 0 {
			name = name[:i]
		}
		if slices.Contains(names, name) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// prometheusFloat prints v as the text format does.
func prometheusFloat(v float64) string {
	exp, _ := testutil.CollectAndFormat(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "x"}, func() float64 { return v }), expfmt.TypeTextPlain, "x")
	line := strings.TrimSpace(string(exp))
	return line[strings.LastIndexByte(line, ' ')+1:]
}

// TestEveryCauseFromZero: a port that has counted nothing yet exports
// every drop cause and error reason it names at 0, one port_state
// series per state (1 for its own), and the recorder's state, gaps,
// space and oldest segment.
func TestEveryCauseFromZero(t *testing.T) {
	fresh := ports.Status{Name: "span0", Kind: "ethernet", Live: true, State: ports.StateSilent,
		DropCauses: []string{"handoff_full", "kernel"}, ErrorReasons: []string{"open", "link_down"}}
	counted := fresh
	counted.Name, counted.Drops, counted.Errors = "span1", map[string]uint64{"kernel": 3}, map[string]uint64{"other": 1}
	s := Sources{Ports: fakePorts{st: []ports.Status{fresh, counted}}, Recorder: fakeRecorder{recording()}}
	exp := only(collected(s),
		"fieldtap_port_drops_total", "fieldtap_port_errors_total", "fieldtap_port_state", "fieldtap_recorder_state",
		"fieldtap_recorder_gaps_total", "fieldtap_recorder_free_bytes", "fieldtap_recorder_quota_bytes", "fieldtap_recorder_oldest_segment_timestamp_seconds")
	for _, want := range []string{
		`fieldtap_port_drops_total{cause="handoff_full",port="span0"} 0`,
		`fieldtap_port_drops_total{cause="kernel",port="span0"} 0`,
		`fieldtap_port_errors_total{port="span0",reason="open"} 0`,
		`fieldtap_port_errors_total{port="span0",reason="link_down"} 0`,
		`fieldtap_port_drops_total{cause="kernel",port="span1"} 3`,
		`fieldtap_port_drops_total{cause="handoff_full",port="span1"} 0`,
		`fieldtap_port_errors_total{port="span1",reason="other"} 1`,
		`fieldtap_port_state{port="span0",state="silent"} 1`,
		`fieldtap_port_state{port="span0",state="capturing"} 0`,
		`fieldtap_port_state{port="span0",state="restarting"} 0`,
		`fieldtap_recorder_state{state="recording"} 1`,
		`fieldtap_recorder_state{state="ram_only"} 0`,
		`fieldtap_recorder_gaps_total 1`,
		`fieldtap_recorder_free_bytes 5.36870912e+09`,
		`fieldtap_recorder_quota_bytes 1.073741824e+09`,
		`fieldtap_recorder_oldest_segment_timestamp_seconds ` + prometheusFloat(float64(t0.Unix())),
	} {
		if !strings.Contains(string(exp), want+"\n") {
			t.Errorf("lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("exported:\n%s", exp)
	}
	if n := strings.Count(string(exp), "fieldtap_port_state{"); n != 2*len(portStates) {
		t.Errorf("%d port_state series, want %d", n, 2*len(portStates))
	}
}

// TestPromtool pipes the whole endpoint, Go and process collectors
// included, through Prometheus's own checker.
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian package prometheus; .ci/run installs it)")
	}
	s := sources(t)
	s.Rules = ruleEngine(t, s)
	body := scrape(t, s)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(body))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	if !strings.Contains(string(body), "fieldtap_rule_state{") || !strings.Contains(string(body), "fieldtap_port_frames_total") || !strings.Contains(string(body), "go_goroutines") {
		t.Errorf("endpoint lacks the box or runtime metrics:\n%s", body)
	}
	t.Logf("promtool: %d bytes checked, %s", len(body), strings.TrimSpace(string(out)))
}

func TestTransmitCounterKeepsTheAuditGate(t *testing.T) {
	failing := errors.New("disk full")
	tests := []struct {
		name string
		next transmit.Auditor
		want error
	}{
		{name: "no audit file refuses every record", next: nil, want: errNoAudit},
		{name: "the auditor's error is returned as is", next: auditorFunc(func(transmit.Record) error { return failing }), want: failing},
		{name: "a written record passes", next: auditorFunc(func(transmit.Record) error { return nil }), want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := CountTransmit(tc.next)
			if err := c.Record(context.Background(), transmit.Record{Event: transmit.EventSending}); !errors.Is(err, tc.want) {
				t.Errorf("Record = %v, want %v", err, tc.want)
			}
			if ev, _ := c.counts(); ev[transmit.EventSending] != 1 {
				t.Errorf("events %v, want sending counted once", ev)
			}
			if c.Configured() != (tc.next != nil) {
				t.Errorf("Configured = %v with next %v", c.Configured(), tc.next)
			}
		})
	}
}

type auditorFunc func(transmit.Record) error

func (f auditorFunc) Record(_ context.Context, r transmit.Record) error { return f(r) }

// scrape is one scrape of the endpoint over s.
func scrape(t *testing.T, s Sources) []byte {
	t.Helper()
	srv := httptest.NewServer(Handler(s))
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body
}
