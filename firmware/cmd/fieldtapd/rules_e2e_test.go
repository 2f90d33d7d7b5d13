package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"fieldtap/services/mqttpub/mqtttest"
	"fieldtap/tools/freeport"
	"time"
)

// runProgram starts path with args, its output in dir/name.log, and
// stops it (SIGTERM, then waits) when the test ends.
func runProgram(t *testing.T, dir, name, path string, args ...string) {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s log:\n%s", name, b)
		}
	})
}

// TestRuleFiresThroughPrometheusToAlertmanager: a box whose slcan
// adapter sends nothing has its port silent; the rule on it fires on the
// box, Debian's Prometheus scrapes fieldtap_rule_state and evaluates the
// alert rule of docs/fleet.md, Alertmanager routes the alert, and the
// test's webhook receives it with the rule's name and severity.
func TestRuleFiresThroughPrometheusToAlertmanager(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not installed (Debian package prometheus; .ci/run installs it)")
	}
	am, err := exec.LookPath("prometheus-alertmanager")
	if err != nil {
		t.Skip("prometheus-alertmanager not installed (Debian package prometheus-alertmanager; .ci/run installs it)")
	}
	_, device := servedCANable(t, nil)
	d := startDaemon(t, fmt.Sprintf("board = \"none\"\n[status]\nlisten = [\"127.0.0.1:0\"]\n"+
		"[[port]]\nname = \"can1\"\ndriver = \"slcan\"\ndevice = %q\nbitrate = 500000\nsilent_after = \"1s\"\n"+
		"[[rule]]\nname = \"can1-silent\"\nkind = \"port_silent\"\nport = \"can1\"\nop = \"above\"\nvalue = 0\nwindow = \"10s\"\nseverity = \"critical\"\n", device))

	alerts := make(chan []byte, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case alerts <- b:
		default:
		}
	}))
	defer hook.Close()

	dir := t.TempDir()
	amAddr, promAddr := fmt.Sprintf("127.0.0.1:%d", freeport.Pick(t, "tcp")), fmt.Sprintf("127.0.0.1:%d", freeport.Pick(t, "tcp"))
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	amCfg := write("alertmanager.yml", fmt.Sprintf("route:\n  receiver: test\n  group_wait: 0s\n  group_interval: 1s\n  repeat_interval: 1h\n"+
		"receivers:\n- name: test\n  webhook_configs:\n  - url: %s/hook\n", hook.URL))
	runProgram(t, dir, "alertmanager", am, "--config.file="+amCfg, "--storage.path="+filepath.Join(dir, "am"),
		"--web.listen-address="+amAddr, "--cluster.listen-address=")
	rulesFile := write("fieldtap-rules.yml", fleetAlertRule)
	promCfg := write("prometheus.yml", fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"+
		"rule_files: [%q]\nalerting:\n  alertmanagers:\n  - static_configs:\n    - targets: [%q]\n"+
		"scrape_configs:\n- job_name: fieldtap\n  static_configs:\n  - targets: [%q]\n", rulesFile, amAddr, strings.TrimPrefix(d.base, "http://")))
	if promtool, err := exec.LookPath("promtool"); err == nil {
		if out, err := exec.Command(promtool, "check", "rules", rulesFile).CombinedOutput(); err != nil {
			t.Fatalf("promtool check rules: %v\n%s", err, out)
		}
	}
	runProgram(t, dir, "prometheus", prom, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr)

	timeout := time.After(giveUp)
	for {
		select {
		case b := <-alerts:
			var msg struct {
				Status string `json:"status"`
				Alerts []struct {
					Status string            `json:"status"`
					Labels map[string]string `json:"labels"`
				} `json:"alerts"`
			}
			if err := json.Unmarshal(b, &msg); err != nil {
				t.Fatalf("webhook body: %v\n%s", err, b)
			}
			for _, a := range msg.Alerts {
				if a.Status == "firing" && a.Labels["alertname"] == "FieldtapRuleFiring" {
					if a.Labels["rule"] != "can1-silent" || a.Labels["severity"] != "critical" {
						t.Fatalf("alert labels %v", a.Labels)
					}
					t.Logf("alertmanager delivered: %v", a.Labels)
					return
				}
			}
		case <-timeout:
			t.Fatalf("no alert reached the webhook; /metrics:\n%s\nfieldtapd:\n%s", grepRule(d.get(t, "/metrics")), d.stderr)
		}
	}
}

// fleetAlertRule is the alert rule docs/fleet.md gives, verbatim
// (TestFleetDocHasTheAlertRule keeps them equal).
const fleetAlertRule = `groups:
- name: fieldtap-rules
  rules:
  - alert: FieldtapRuleFiring
    expr: fieldtap_rule_state == 1
    annotations:
      summary: 'fieldtap rule {{ $labels.rule }} fires on {{ $labels.instance }}'
`

// TestFleetDocHasTheAlertRule: the rule the test runs is the one the
// operator copies.
func TestFleetDocHasTheAlertRule(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "fleet.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "```yaml\n"+fleetAlertRule+"```") {
		t.Errorf("docs/fleet.md lacks the alert rule:\n%s", fleetAlertRule)
	}
}

func grepRule(metrics []byte) string {
	var out []string
	for l := range strings.SplitSeq(string(metrics), "\n") {
		if strings.HasPrefix(l, "fieldtap_rule_") || strings.HasPrefix(l, "fieldtap_port_state") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestRuleStatesReachMosquitto: every rule's retained state is published
// at start, and a firing one publishes its new retained state and one
// event naming the state it left, to Debian's Mosquitto.
func TestRuleStatesReachMosquitto(t *testing.T) {
	b := mqtttest.Start(t)
	sub := b.Subscribe("fieldtap/rbox/rule/#")
	_, device := servedCANable(t, nil)
	startDaemon(t, fmt.Sprintf("board = \"none\"\n[status]\nlisten = [\"127.0.0.1:0\"]\n"+
		"[mqtt]\nenabled = true\nbroker = %q\nbox = \"rbox\"\n"+
		"[[port]]\nname = \"can1\"\ndriver = \"slcan\"\ndevice = %q\nbitrate = 500000\nsilent_after = \"1s\"\n"+
		"[[rule]]\nname = \"can1-silent\"\nkind = \"port_silent\"\nport = \"can1\"\nop = \"above\"\nvalue = 0\nwindow = \"10s\"\nseverity = \"critical\"\n"+
		"[[rule]]\nname = \"disk\"\nkind = \"disk_free\"\nop = \"below\"\nvalue = 1\nseverity = \"info\"\n", b.URL(), device))
	find := func(ms []mqtttest.Message, topic string, retain bool, contains ...string) *mqtttest.Message {
		for i, m := range ms {
			if m.Topic != "fieldtap/rbox/rule/"+topic || m.Retain != retain {
				continue
			}
			ok := true
			for _, c := range contains {
				ok = ok && strings.Contains(string(m.Payload), c)
			}
			if ok {
				return &ms[i]
			}
		}
		return nil
	}
	sub.Wait("the disk rule's retained state (no recorder: no_data)", func(ms []mqtttest.Message) bool {
		return find(ms, "disk/state", true, `"state":"no_data"`, `"value":null`) != nil
	})
	got := sub.Wait("the silent port's firing state and its event", func(ms []mqtttest.Message) bool {
		return find(ms, "can1-silent/state", true, `"state":"firing"`) != nil && find(ms, "can1-silent/event", false, `"state":"firing"`) != nil
	})
	ev := find(got, "can1-silent/event", false, `"state":"firing"`)
	var e struct {
		State, From, Severity string
		Value                 *float64
		Evidence              struct{ Tool string }
	}
	if err := json.Unmarshal(ev.Payload, &e); err != nil {
		t.Fatal(err)
	}
	if e.From == "" || e.From == "firing" || e.Severity != "critical" || e.Value == nil || *e.Value != 1 || e.Evidence.Tool != "capture_status" {
		t.Errorf("event %s", ev.Payload)
	}
	t.Logf("event: %s", ev.Payload)
}

// TestFiringRuleRequestsEvidence: a rule with seal_evidence that fires
// pins the recorded window and leaves a pending bundle whose trigger is
// the rule's change.
func TestFiringRuleRequestsEvidence(t *testing.T) {
	_, device := servedCANable(t, nil)
	dir := t.TempDir()
	d := startDaemon(t, fmt.Sprintf("board = \"none\"\n[status]\nlisten = [\"127.0.0.1:0\"]\n"+
		"[recorder]\nenabled = true\ndir = %q\nevidence_dir = %q\n"+
		"[[port]]\nname = \"can1\"\ndriver = \"slcan\"\ndevice = %q\nbitrate = 500000\nsilent_after = \"1s\"\n"+
		"[[rule]]\nname = \"can1-silent\"\nkind = \"port_silent\"\nport = \"can1\"\nop = \"above\"\nvalue = 0\nwindow = \"10s\"\nseverity = \"warning\"\nseal_evidence = true\n",
		filepath.Join(dir, "rec"), filepath.Join(dir, "evidence"), device))
	deadline := time.Now().Add(giveUp)
	for !strings.Contains(d.stderr.String(), "rule evidence requested") {
		if time.Now().After(deadline) {
			t.Fatalf("no evidence requested:\n%s", d.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	pending, err := filepath.Glob(filepath.Join(dir, "evidence", "*", "*.json"))
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending requests %v %v", pending, err)
	}
	b, err := os.ReadFile(pending[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Reason":"rule"`, `can1-silent`, `firing`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("pending request lacks %s:\n%s", want, b)
		}
	}
}
