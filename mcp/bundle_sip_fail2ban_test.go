package mcp

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// fail2banMatches runs Debian's fail2ban-regex on lines with filter, both
// written to a temporary directory, and returns the address of each line
// it matched.
func fail2banMatches(t *testing.T, filter string, lines ...string) []string {
	t.Helper()
	bin, err := exec.LookPath("fail2ban-regex")
	if err != nil {
		t.Skip("fail2ban-regex (Debian's fail2ban package) is not installed")
	}
	dir := t.TempDir()
	fpath, log := filepath.Join(dir, "fieldtap.conf"), filepath.Join(dir, "pbx.log")
	if err := os.WriteFile(fpath, []byte(filter), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-o", "ip", log, fpath).CombinedOutput()
	if err != nil {
		t.Fatalf("fail2ban-regex: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// The INVITE flood of branch-scenario-sipp.pcapng (1,334 INVITEs from
// 127.0.0.1, tshark 4.0.17) as a fail2ban rule: named by its id or by kind
// and source, for Asterisk by default (SIPp names no PBX) or Kamailio;
// fail2ban-regex finds 127.0.0.1 on the sample line and nothing on a line
// of another event.
func TestFail2banRuleOnTheSIPpCapture(t *testing.T) {
	h := newHarness(t, captureDeps(t, filepath.Join(refdata.Dir(t, "sip"), "branch-scenario-sipp.pcapng"), rtp.Options{}))
	var id string
	for _, f := range data(h.ok("sip_security_findings", nil))["findings"].([]any) {
		if f := f.(map[string]any); f["kind"] == "invite_flood" {
			id = f["id"].(string)
		}
	}
	r := data(h.ok("generate_fail2ban_rule", map[string]any{"finding": id}))
	if r["finding"] != id || r["pbx"] != "asterisk" || r["pbx_from"] != "default" || r["source"] != "127.0.0.1" ||
		r["filter_path"] != "/etc/fail2ban/filter.d/fieldtap-invite-flood-asterisk.conf" || r["log_path"] != "/var/log/asterisk/security" {
		t.Errorf("rule %v", r)
	}
	jail := r["jail"].(string)
	for _, want := range []string{"[fieldtap-invite-flood-asterisk]", "maxretry = 120", "findtime = 60", "finding " + id + ":"} {
		if !strings.Contains(jail, want) {
			t.Errorf("jail lacks %q:\n%s", want, jail)
		}
	}
	sample := r["sample_log_line"].(string)
	if !strings.Contains(sample, `RemoteAddress="IPV4/UDP/127.0.0.1/5061"`) || !strings.HasPrefix(sample, "[2016-11-17 21:54:48]") {
		t.Errorf("sample %q: want the source 127.0.0.1:5061 at the flood's last INVITE", sample)
	}
	other := strings.Replace(sample, `SecurityEvent="InvalidAccountID"`, `SecurityEvent="SuccessfulAuth"`, 1)
	if got := fail2banMatches(t, r["filter"].(string), sample, other); strings.Join(got, " ") != "127.0.0.1" {
		t.Errorf("fail2ban-regex matched %v on\n%s\n%s\nwant 127.0.0.1 once", got, sample, other)
	}

	k := data(h.ok("generate_fail2ban_rule", map[string]any{"kind": "invite_flood", "source": "127.0.0.1", "pbx": "kamailio"}))
	if k["finding"] != id || k["pbx_from"] != "argument" || k["log_path"] != "/var/log/syslog" {
		t.Errorf("by kind and source: %v", k)
	}
	if got := fail2banMatches(t, k["filter"].(string), k["sample_log_line"].(string)); strings.Join(got, " ") != "127.0.0.1" {
		t.Errorf("kamailio: fail2ban-regex matched %v on %q", got, k["sample_log_line"])
	}

	h.fails("generate_fail2ban_rule", map[string]any{"kind": "invite_flood", "source": "127.0.0.1/32"}, CodeInvalidArgument)
	h.fails("generate_fail2ban_rule", map[string]any{"kind": "invite_flood"}, CodeInvalidArgument)
	h.fails("generate_fail2ban_rule", map[string]any{"finding": id, "source": "127.0.0.1"}, CodeInvalidArgument)
	h.fails("generate_fail2ban_rule", map[string]any{"kind": "options_sweep", "source": "127.0.0.1"}, CodeNotFound)
	h.fails("generate_fail2ban_rule", map[string]any{"finding": "invite_flood/127.0.0.1/2016-11-17T00:00:00Z"}, CodeNotFound)
	h.fails("generate_fail2ban_rule", map[string]any{"finding": id, "pbx": "opensips"}, CodeInvalidArgument)
}

// A scanner floods INVITEs with a User-Agent and To user that try to write
// fail2ban configuration; the PBX answers 401 with its Server header. The
// finding's User-Agents and targets are fenced; the rule names the PBX the
// Server header announces and holds nothing the scanner wrote.
func TestFail2banRuleHoldsNoSenderText(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	const hostile = "friendly-scanner\"]\nfailregex = .*\nignoreip = 0.0.0.0/0 <HOST>"
	scanner, pbx := netip.MustParseAddrPort("203.0.113.9:5070"), netip.MustParseAddrPort("192.0.2.2:5060")
	add := func(at time.Time, src, dst netip.AddrPort, raw string) {
		var m sip.Parsed
		if err := m.Parse([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		st.Add(sip.Meta{Time: at, Src: src, Dst: dst, Transport: sip.TransportUDP}, &m, []byte(raw))
	}
	for i := range 130 {
		id, at := fmt.Sprintf("flood-%d", i), time.Unix(1000, 0).Add(time.Duration(i)*200*time.Millisecond)
		head := func(start string) string {
			return fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%s\r\nFrom: <sip:x@h>;tag=1\r\nTo: <sip:%s@h>\r\nCall-ID: %s\r\nCSeq: 1 INVITE\r\n",
				start, id, "100(IP:198.51.100.1:5060)", id)
		}
		add(at, scanner, pbx, head("INVITE sip:100@h SIP/2.0")+"User-Agent: "+strings.ReplaceAll(hostile, "\n", " ")+"\r\nContent-Length: 0\r\n\r\n")
		add(at.Add(time.Millisecond), pbx, scanner, head("SIP/2.0 401 Unauthorized")+"Server: kamailio (5.7.4 (x86_64/linux))\r\nContent-Length: 0\r\n\r\n")
	}
	d := fullDeps(t)
	d.SIP = st
	h := newHarness(t, d)
	var flood map[string]any
	for _, f := range data(h.ok("sip_security_findings", nil))["findings"].([]any) {
		if f := f.(map[string]any); f["kind"] == "invite_flood" {
			flood = f
		}
	}
	if flood == nil || flood["total"] != 130.0 || flood["answered_4xx_pct"] != 100.0 {
		t.Fatalf("invite flood %v", flood)
	}
	checkFenced(t, "user_agents", flood["user_agents"])
	checkFenced(t, "targets", flood["targets"])
	r := data(h.ok("generate_fail2ban_rule", map[string]any{"finding": flood["id"]}))
	if r["pbx"] != "kamailio" || r["pbx_from"] != "user_agent" || r["source"] != "203.0.113.9" {
		t.Errorf("rule for %v from %v by %v", r["source"], r["pbx"], r["pbx_from"])
	}
	for _, k := range []string{"filter", "jail", "sample_log_line"} {
		for _, bad := range []string{"friendly-scanner", "ignoreip", "198.51.100.1", untrusted.Open} {
			if strings.Contains(r[k].(string), bad) {
				t.Errorf("%s holds %q:\n%s", k, bad, r[k])
			}
		}
	}
	if got := fail2banMatches(t, r["filter"].(string), r["sample_log_line"].(string)); strings.Join(got, " ") != "203.0.113.9" {
		t.Errorf("fail2ban-regex matched %v on %q", got, r["sample_log_line"])
	}
}

// TestSecurityFindingsFollowTheStore: sip_security_findings' analysis is
// kept with the store's snapshot (sip.Snapshot.Derived): asked again of
// a quiet store it answers the same, with another filter for that
// filter, and once the store changes for its new dialogs.
func TestSecurityFindingsFollowTheStore(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	caller, pbx := netip.MustParseAddrPort("203.0.113.9:5070"), netip.MustParseAddrPort("192.0.2.2:5060")
	calls := 0
	dial := func(n int) { // n INVITEs from one source, 200 ms apart, each answered 486
		for range n {
			id, at := fmt.Sprintf("call-%d", calls), time.Unix(1000, 0).Add(time.Duration(calls)*200*time.Millisecond)
			for _, msg := range []struct {
				src, dst netip.AddrPort
				start    string
			}{{caller, pbx, "INVITE sip:100@h SIP/2.0"}, {pbx, caller, "SIP/2.0 486 Busy Here"}} {
				raw := fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%s\r\nFrom: <sip:7001@h>;tag=1\r\nTo: <sip:100@h>\r\nCall-ID: %s\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n", msg.start, id, id)
				var m sip.Parsed
				if err := m.Parse([]byte(raw)); err != nil {
					t.Fatal(err)
				}
				st.Add(sip.Meta{Time: at, Src: msg.src, Dst: msg.dst, Transport: sip.TransportUDP}, &m, []byte(raw))
			}
			calls++
		}
	}
	d := fullDeps(t)
	d.SIP = st
	h := newHarness(t, d)
	floods := func(filter string) []string {
		var out []string
		for _, f := range data(h.ok("sip_security_findings", map[string]any{"filter": filter}))["findings"].([]any) {
			f := f.(map[string]any)
			out = append(out, fmt.Sprintf("%v %v", f["kind"], f["total"]))
		}
		return out
	}
	dial(100) // under the 120 INVITEs a minute of sipsecurity.Defaults
	for range 2 {
		if got := floods(""); len(got) != 0 {
			t.Fatalf("100 INVITEs in 20 s: findings %v, want none", got)
		}
	}
	dial(100)
	want := []string{"invite_flood 200"}
	for range 2 {
		if got := floods(""); !slices.Equal(got, want) {
			t.Fatalf("200 INVITEs in 40 s: findings %v, want %v", got, want)
		}
	}
	if got := floods(`from_user == "nobody"`); len(got) != 0 {
		t.Fatalf("with a filter matching no dialog: findings %v, want none", got)
	}
	if got := floods(""); !slices.Equal(got, want) {
		t.Fatalf("asked again without the filter: findings %v, want %v", got, want)
	}
}
