package sipfail2ban

import (
	"bufio"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fieldtap/services/sipsecurity"
)

var kinds = []string{kindScanner, kindRegisterFlood, kindAuthStorm, kindInviteFlood, kindOptionsSweep}

func TestKindsAreSipsecuritysKinds(t *testing.T) {
	want := []string{sipsecurity.KindScanner, sipsecurity.KindRegisterFlood, sipsecurity.KindAuthStorm, sipsecurity.KindInviteFlood, sipsecurity.KindOptionsSweep}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Errorf("kinds %v, sipsecurity's %v", kinds, want)
	}
}

// fail2banRegex runs Debian's fail2ban-regex on lines with r's filter,
// both written to a temporary directory, and returns the address of each
// matched line (-o ip).
func fail2banRegex(t *testing.T, r Rule, lines ...string) []string {
	t.Helper()
	bin, err := exec.LookPath("fail2ban-regex")
	if err != nil {
		t.Skip("fail2ban-regex (Debian's fail2ban package) is not installed")
	}
	dir := t.TempDir()
	filter, log := filepath.Join(dir, r.Name+".conf"), filepath.Join(dir, "pbx.log")
	if err := os.WriteFile(filter, []byte(r.Filter), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-o", "ip", log, filter).CombinedOutput()
	if err != nil {
		t.Fatalf("fail2ban-regex %s: %v\n%s", r.Name, err, out)
	}
	return strings.Fields(string(out))
}

func finding(kind, src string) Finding {
	return Finding{ID: kind + "/" + src + "/2016-11-17T21:52:35.303579687Z", Kind: kind, Source: netip.MustParseAddr(src), SourcePort: 5061,
		Local: netip.MustParseAddrPort("127.0.0.1:5060"), At: time.Date(2016, 11, 17, 21, 54, 48, 601474824, time.UTC), Threshold: 120, Window: time.Minute}
}

// Every sample line matches its filter with the finding's source, IPv4 or
// IPv6; the same line with a second address planted where sender text is
// logged (the account, the From URI, the user) matches nothing, nor does a
// line of an event the filter does not count. One fail2ban-regex run per
// filter: its addresses are exactly the two samples'.
func TestSamplesMatchInFail2banRegex(t *testing.T) {
	planted := map[PBX][2]string{
		Asterisk:   {`AccountID="unknown"`, `AccountID="x",LocalAddress="IPV4/UDP/127.0.0.1/5060",RemoteAddress="IPV4/UDP/192.0.2.66/5060"`},
		Kamailio:   {`from sip:unknown@invalid`, `from sip:x@(IP:192.0.2.66:5060)`},
		FreeSWITCH: {`[unknown@`, `[x] from ip 192.0.2.66 [unknown@`},
	}
	other := map[PBX][2]string{
		Asterisk:   {`SecurityEvent="`, `SecurityEvent="SuccessfulAuth",Was="`},
		Kamailio:   {`pike blocking`, `pike passing`},
		FreeSWITCH: {`[WARNING]`, `[DEBUG]`},
	}
	for _, pbx := range PBXs {
		for _, kind := range kinds {
			var lines, want []string
			var r Rule
			for _, src := range []string{"127.0.0.1", "2001:db8::7"} {
				var err error
				if r, err = Build(finding(kind, src), pbx); err != nil {
					t.Fatal(err)
				}
				bad := []string{strings.Replace(r.Sample, planted[pbx][0], planted[pbx][1], 1), strings.Replace(r.Sample, other[pbx][0], other[pbx][1], 1)}
				if bad[0] == r.Sample || bad[1] == r.Sample {
					t.Fatalf("%s: the sample %q changed nothing", r.Name, r.Sample)
				}
				lines, want = append(append(lines, r.Sample), bad...), append(want, src)
			}
			if got := fail2banRegex(t, r, lines...); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: lines\n%s\nmatched %v, want %v (the samples')\nfilter:\n%s", r.Name, strings.Join(lines, "\n"), got, want, r.Filter)
			}
		}
	}
}

// fail2ban's own test logs (Debian ships them with python3-fail2ban) are
// real Asterisk and FreeSWITCH lines, each under a failJSON comment with
// the host fail2ban's filter must find. Our filters find the same host on
// the lines of the events they count, and nothing on the line that plants a
// second RemoteAddress in the SessionID (fail2ban's filter bans its last).
func TestFail2bansOwnLogLines(t *testing.T) {
	const dir = "/usr/lib/python3/dist-packages/fail2ban/tests/files/logs"
	for _, c := range []struct {
		pbx   PBX
		kind  string
		file  string
		count *regexp.Regexp // the lines the filter counts
	}{
		{Asterisk, kindInviteFlood, "asterisk", regexp.MustCompile(`SecurityEvent="(?:InvalidAccountID|FailedACL|ChallengeResponseFailed|InvalidPassword|ChallengeSent)".*Service="(?:SIP|PJSIP)"`)},
		{Asterisk, kindAuthStorm, "asterisk", regexp.MustCompile(`SecurityEvent="(?:ChallengeResponseFailed|InvalidPassword)".*Service="(?:SIP|PJSIP)"`)},
		{FreeSWITCH, kindInviteFlood, "freeswitch", regexp.MustCompile(`SIP auth (?:failure|challenge) \(INVITE\)`)},
		{FreeSWITCH, kindOptionsSweep, "freeswitch", regexp.MustCompile(`Can't find user|SIP auth failure`)},
	} {
		lines, hosts, planted := failJSONLines(t, filepath.Join(dir, c.file), c.count)
		r, err := Build(finding(c.kind, "192.0.2.1"), c.pbx)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) < 3 {
			t.Fatalf("%s: %d lines of %s in %s", r.Name, len(lines), c.count, c.file)
		}
		if got := fail2banRegex(t, r, lines...); strings.Join(got, " ") != strings.Join(hosts, " ") {
			t.Errorf("%s on fail2ban's %s lines: %v, want %v", r.Name, c.file, got, hosts)
		}
		if len(planted) > 0 {
			if got := fail2banRegex(t, r, planted...); len(got) != 0 {
				t.Errorf("%s: planted lines %q matched %v", r.Name, planted, got)
			}
		}
	}
}

// failJSONLines returns the lines of file that count matches, each under a
// failJSON comment with "match": true, and the hosts the comments name;
// planted are those lines naming RemoteAddress twice.
func failJSONLines(t *testing.T, file string, count *regexp.Regexp) (lines, hosts, planted []string) {
	t.Helper()
	fh, err := os.Open(file)
	if os.IsNotExist(err) {
		t.Skipf("%s: fail2ban's test logs are not installed (Debian's python3-fail2ban)", file)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var want struct {
		Match bool   `json:"match"`
		Host  string `json:"host"`
	}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		if j, ok := strings.CutPrefix(line, "# failJSON: "); ok {
			want.Match, want.Host = false, ""
			if err := json.Unmarshal([]byte(j), &want); err != nil {
				t.Fatalf("%s: %q: %v", file, line, err)
			}
			continue
		}
		if strings.HasPrefix(line, "#") || !want.Match || !count.MatchString(line) {
			continue
		}
		if strings.Count(line, "RemoteAddress=") > 1 {
			planted = append(planted, line)
			continue
		}
		lines, hosts = append(lines, line), append(hosts, want.Host)
	}
	return lines, hosts, planted
}

func TestBuildRefuses(t *testing.T) {
	good := finding(kindInviteFlood, "127.0.0.1")
	for name, c := range map[string]struct {
		f   Finding
		pbx PBX
	}{
		"pbx":       {good, "opensips"},
		"kind":      {Finding{Kind: "x", Source: good.Source, Threshold: 1, Window: time.Minute}, Asterisk},
		"source":    {Finding{Kind: kindInviteFlood, Threshold: 1, Window: time.Minute}, Asterisk},
		"any":       {Finding{Kind: kindInviteFlood, Source: netip.IPv6Unspecified(), Threshold: 1, Window: time.Minute}, Asterisk},
		"threshold": {Finding{Kind: kindInviteFlood, Source: good.Source, Window: time.Minute}, Asterisk},
	} {
		if _, err := Build(c.f, c.pbx); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if p, ok := Guess("Asterisk PBX 18.2.0"); !ok || p != Asterisk {
		t.Errorf("Guess: %v %v", p, ok)
	}
	if _, ok := Guess("SIPp"); ok {
		t.Error("Guess named a PBX for SIPp")
	}
}

// The jail says the finding's threshold and window and no text of its own
// making but the box's.
func TestJail(t *testing.T) {
	r, err := Build(finding(kindInviteFlood, "127.0.0.1"), Asterisk)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[fieldtap-invite-flood-asterisk]\n", "filter   = fieldtap-invite-flood-asterisk\n", "logpath  = /var/log/asterisk/security\n",
		"maxretry = 120\n", "findtime = 60\n", "bantime  = 3600\n", "usedns   = no\n"} {
		if !strings.Contains(r.Jail, want) {
			t.Errorf("jail lacks %q:\n%s", want, r.Jail)
		}
	}
}

// fail2ban-client loads each jail with its filter on a copy of the host's
// /etc/fail2ban (its own jails left out, the logpath a temporary file):
// the configuration test passes and the dump has the jail's actions for
// TCP and UDP, its maxretry and findtime, and the filter's failregex.
func TestJailLoadsInFail2banClient(t *testing.T) {
	bin, err := exec.LookPath("fail2ban-client")
	if err != nil {
		t.Skip("fail2ban-client (Debian's fail2ban package) is not installed")
	}
	if _, err := os.Stat("/etc/fail2ban/jail.conf"); err != nil {
		t.Skip("/etc/fail2ban/jail.conf (Debian's fail2ban package) is not installed")
	}
	for _, pbx := range PBXs {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS("/etc/fail2ban")); err != nil {
			t.Fatal(err)
		}
		jails, _ := filepath.Glob(filepath.Join(dir, "jail.d", "*"))
		for _, j := range append(jails, filepath.Join(dir, "jail.local")) {
			os.Remove(j)
		}
		r, err := Build(finding(kindInviteFlood, "203.0.113.9"), pbx)
		if err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(dir, "pbx.log")
		jail := strings.Replace(r.Jail, "logpath  = "+r.LogPath+"\n", "logpath  = "+log+"\n", 1)
		for name, body := range map[string]string{log: r.Sample + "\n", filepath.Join(dir, "filter.d", r.Name+".conf"): r.Filter, filepath.Join(dir, "jail.d", r.Name+".conf"): jail} {
			if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if out, err := exec.Command(bin, "-c", dir, "--test").CombinedOutput(); err != nil {
			t.Fatalf("%s: fail2ban-client --test: %v\n%s\njail:\n%s", r.Name, err, out, jail)
		}
		out, err := exec.Command(bin, "-c", dir, "-d").CombinedOutput()
		if err != nil {
			t.Fatalf("%s: fail2ban-client -d: %v\n%s", r.Name, err, out)
		}
		for _, want := range []string{
			"['add', '" + r.Name + "', 'auto']",
			"['set', '" + r.Name + "', 'maxretry', 120]",
			"['set', '" + r.Name + "', 'findtime', '60']",
			"['set', '" + r.Name + "', 'addfailregex', ",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s: fail2ban-client -d lacks %s", r.Name, want)
			}
		}
		// The action is the host's banaction, one for each protocol.
		for _, proto := range []string{"tcp", "udp"} {
			if !regexp.MustCompile(`\['set', '` + r.Name + `', 'addaction', '[^']+-` + proto + `'\]`).Match(out) {
				t.Errorf("%s: fail2ban-client -d has no %s action", r.Name, proto)
			}
		}
	}
}
