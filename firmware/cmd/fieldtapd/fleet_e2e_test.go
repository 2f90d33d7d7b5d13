//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"fieldtap/board/sim/j1939gen"
	"fieldtap/tools/refdata"
)

// TestFleetScript runs scripts/fleet.sh small: three boxes for ten
// seconds, feeding Debian's Mosquitto, Prometheus and Kamailio's
// sipcapture on PostgreSQL, all started by the script. Box 2 replays the
// Kenworth log (its DM1 lists SPN 168, PROVENANCE.md), box 3 the SIP call
// of RTP-Protocol.pcap (9 messages, PROVENANCE.md). The fleet queries
// answer with those boxes, every engine is measured, and when the script
// has ended none of the processes it started is left and its folder is
// gone. The fifty-box run of docs/fleet.md is the same script.
func TestFleetScript(t *testing.T) {
	kenworth := refdata.File(t, "can", "cytr_candump_on_a_Kenworth.log")
	refdata.File(t, "sip", "RTP-Protocol.pcap")
	for _, need := range []struct{ glob, pkg string }{
		{"/usr/sbin/mosquitto", "mosquitto"}, {"/usr/bin/mosquitto_sub", "mosquitto-clients"},
		{"/usr/bin/prometheus", "prometheus"}, {"/usr/sbin/kamailio", "kamailio"},
		{"/usr/lib/*/kamailio/modules/sipcapture.so", "kamailio"},
		{"/usr/lib/*/kamailio/modules/db_postgres.so", "kamailio-postgres-modules"},
		{"/usr/lib/postgresql/*/bin/pg_ctl", "postgresql"}, {"/usr/bin/jq", "jq"}, {"/usr/bin/curl", "curl"},
	} {
		if m, _ := filepath.Glob(need.glob); len(m) == 0 {
			t.Skipf("%s not installed (Debian package %s; .ci/run installs it)", need.glob, need.pkg)
		}
	}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("runuser"); err != nil {
			t.Skip("running as root without runuser to start PostgreSQL as its user (Debian package util-linux)")
		}
	}
	cmd := exec.Command("bash", filepath.Join("..", "..", "..", "scripts", "fleet.sh"), "3", "10")
	cmd.Env = append(os.Environ(), "FIELDTAPD="+binary, "FLEET_WARMUP=20", "FLEET_KENWORTH=2", "FLEET_SIPCALL=3",
		refdata.EnvVar+"="+filepath.Dir(filepath.Dir(kenworth)))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	report := out.String()
	if err != nil {
		t.Fatalf("scripts/fleet.sh 3 10: %v\n%s", err, report)
	}
	t.Logf("scripts/fleet.sh 3 10:\n%s", report)

	m := regexp.MustCompile(`(?m)^fleet: 3 boxes, .* in (/\S+)$`).FindStringSubmatch(report)
	if m == nil {
		t.Fatal("the report does not name the script's folder")
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("the script's folder %s is still there (%v)", m[1], err)
	}
	if left := processesMentioning(t, m[1]); len(left) > 0 {
		t.Errorf("processes the script started are still running: %q", left)
	}

	for _, engine := range []string{"mosquitto", "prometheus", "kamailio", "postgres", "boxes"} {
		row := regexp.MustCompile(`(?m)^` + engine + `\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+(\d+)$`).FindStringSubmatch(report)
		if row == nil || row[1] == "0.0" || row[2] == "0" {
			t.Errorf("%s not measured (memory and processes): %q", engine, row)
		}
	}
	if m := regexp.MustCompile(`sip_capture \+([\d.]+) rows/s`).FindStringSubmatch(report); m == nil || m[1] == "0.00" {
		t.Errorf("no HEP rows written in the interval: %q", m)
	}
	// Which box saw the reference call's Call-ID: box 3 alone, with
	// every one of its SIP messages.
	if !regexp.MustCompile(`(?m)^ truck-03 \|\s+9 \|.*\n\(1 row\)$`).MatchString(report) {
		t.Error("the Call-ID query does not answer truck-03 alone with its 9 messages")
	}
	// Which trucks have an SPN active: the Kenworth's on box 2 only; the
	// sim engine's on every box.
	for spn, want := range map[int]string{168: "truck-02", j1939gen.FaultSPN: "truck-01 truck-02 truck-03"} {
		m := regexp.MustCompile(`(?m)grep '"spn":` + strconv.Itoa(spn) + `,'.*\n(.*)$`).FindStringSubmatch(report)
		if m == nil || strings.TrimSpace(m[1]) != want {
			t.Errorf("trucks with SPN %d active: %q, want %q", spn, m, want)
		}
	}
	if !strings.Contains(report, "\ntruck-02 spn168-active severity=warning\n") {
		t.Error("PromQL does not find the spn168-active rule firing on truck-02")
	}
}

// processesMentioning lists the command lines that contain s.
func processesMentioning(t *testing.T, s string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err == nil && bytes.Contains(b, []byte(s)) {
			found = append(found, string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return found
}
