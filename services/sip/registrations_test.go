package sip

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"

	"fieldtap/board/sim/sipgen"
	"fieldtap/services/netdecode"
	"fieldtap/tools/refdata"
)

// regCounts are the per-AoR numbers tshark can give: REGISTER requests
// and the 401, 407 and 200 answers, retransmissions apart.
type regCounts struct{ Register, C401, C407, C200 int }

// tsharkRegistrations counts, per AoR, what tshark's
// `sip.CSeq.method == "REGISTER"` shows in path.
func tsharkRegistrations(t *testing.T, path string) map[string]regCounts {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed (apt-get install tshark)")
	}
	var stderr bytes.Buffer
	cmd := exec.Command("tshark", "-n", "-r", path, "-Y", `sip.CSeq.method == "REGISTER"`,
		"-T", "fields", "-E", "occurrence=f", "-e", "sip.Method", "-e", "sip.Status-Code", "-e", "sip.to.addr", "-e", "sip.resend")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v\n%s", path, err, stderr.String())
	}
	got := map[string]regCounts{}
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 4 || f[3] == "1" || f[3] == "True" {
			continue // a retransmission
		}
		aor := AoROf([]byte("<" + f[2] + ">"))
		c := got[aor]
		switch {
		case f[0] == "REGISTER":
			c.Register++
		case f[1] == "401":
			c.C401++
		case f[1] == "407":
			c.C407++
		case f[1] == "200":
			c.C200++
		}
		got[aor] = c
	}
	return got
}

// ours are the same numbers from the registration table.
func ours(st *Store) map[string]regCounts {
	got := map[string]regCounts{}
	for _, r := range st.Registrations().Rows {
		got[r.AoR] = regCounts{Register: r.Requests, C401: r.Challenges401, C407: r.Challenges407, C200: r.Successes + r.Unregistrations}
	}
	return got
}

// TestRegistrationsMatchTshark compares the per-AoR counts with tshark on
// the reference captures that carry REGISTER (PROVENANCE.md): each
// REGISTER, 401, 407 and 200 per To URI, retransmissions apart.
func TestRegistrationsMatchTshark(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	for _, file := range []string{"sip-2phones-B2BUA-Asterisk.pcapng", "aaa.pcap", "SIP_CALL_RTP_G711.pcap", "branch-scenario-sipp.pcapng", "websocket-sip.pcapng"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(dir, file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s is not in the reference data here (PROVENANCE.md lists it): %v", file, err)
			}
			want := tsharkRegistrations(t, path)
			if len(want) == 0 {
				t.Fatalf("tshark shows no REGISTER in %s", file)
			}
			st, _ := loadCapture(t, path)
			if got := ours(st); !maps.Equal(got, want) {
				t.Errorf("per AoR\n got %v\nwant %v (tshark)", got, want)
			}
			// Every REGISTER in them is a phone's or SIPp's user agent,
			// each answered 200 within its grant.
			v := st.Registrations()
			for i, k := range Kinds(v.Rows) {
				if r := v.Rows[i].At(v.Latest); k.Kind != KindUser || r.State() != RegRegistered || r.Flaps != 0 {
					t.Errorf("%s: %s %v, %s, %d flaps; want a registered user", r.AoR, k.Kind, k.Reasons, r.State(), r.Flaps)
				}
			}
			t.Logf("%s: %v", file, want)
		})
	}
}

// generated writes sipgen's registration scenario to a file and loads it.
func generated(t *testing.T) (*Store, string) {
	t.Helper()
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	if err := sipgen.WriteRegistrationsPcapng(&buf, start); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "registrations.pcapng")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	pkts, err := sipgen.Registrations(start)
	if err != nil {
		t.Fatal(err)
	}
	st := newStore(t, Limits{})
	a := NewAnalyser(st, netdecode.Options{})
	for _, p := range pkts {
		a.Feed(p.Time, wire.LinkEthernet, p.Data)
	}
	return st, path
}

func TestGeneratedRegistrationsMatchTshark(t *testing.T) {
	st, path := generated(t)
	if got, want := ours(st), tsharkRegistrations(t, path); !maps.Equal(got, want) {
		t.Errorf("per AoR\n got %v\nwant %v (tshark)", got, want)
	}
}

// TestGeneratedRegistrationStates checks every case of the generated
// scenario (sipgen.Registrations says what each AoR does), judged at the
// capture's latest time.
func TestGeneratedRegistrationStates(t *testing.T) {
	st, _ := generated(t)
	v := st.Registrations()
	rows := map[string]Registration{}
	for _, r := range v.Rows {
		rows[r.AoR] = r.At(v.Latest)
	}
	kinds := Kinds(v.Rows)
	kindOf := map[string]RegKind{}
	for i, r := range v.Rows {
		kindOf[r.AoR] = kinds[i]
	}
	type want struct {
		state                                      string
		successes, challenged, unregs              int
		failures                                   []CodeCount
		failedChallenges, noAnswer, lapses, flaps  int
		c401, c407, requests, retransmits, contact int
		kind                                       string
	}
	cases := map[string]want{
		"sip:1001@pbx.example.com": {state: RegLapsed, successes: 2, lapses: 1, requests: 2, retransmits: 1, kind: KindUser, contact: 1},
		"sip:1002@pbx.example.com": {state: RegFailed, failures: []CodeCount{{403, 1}}, failedChallenges: 2, noAnswer: 1, c401: 2, requests: 4, kind: KindUser},
		"sip:1003@pbx.example.com": {state: RegRegistered, successes: 3, challenged: 1, failures: []CodeCount{{503, 1}}, lapses: 1, flaps: 2,
			c407: 1, requests: 5, kind: KindUser, contact: 1},
		"sip:1004@pbx.example.com":            {state: RegUnregistered, successes: 1, unregs: 1, requests: 2, kind: KindUser},
		"sip:4420790000@sip.provider.example": {state: RegRegistered, successes: 3, challenged: 3, c401: 3, requests: 6, kind: KindTrunk, contact: 1},
	}
	if len(rows) != len(cases) {
		t.Errorf("%d rows, want %d", len(rows), len(cases))
	}
	for aor, w := range cases {
		r, ok := rows[aor]
		if !ok {
			t.Errorf("%s: no row", aor)
			continue
		}
		got := want{state: r.State(), successes: r.Successes, challenged: r.ChallengedSuccesses, unregs: r.Unregistrations, failures: r.Failures,
			failedChallenges: r.FailedChallenges, noAnswer: r.NoAnswer, lapses: r.Lapses, flaps: r.Flaps,
			c401: r.Challenges401, c407: r.Challenges407, requests: r.Requests, retransmits: r.Retransmits, contact: len(r.Contacts), kind: kindOf[aor].Kind}
		if !slices.Equal(got.failures, w.failures) || got.state != w.state || got.successes != w.successes || got.challenged != w.challenged ||
			got.unregs != w.unregs || got.failedChallenges != w.failedChallenges || got.noAnswer != w.noAnswer || got.lapses != w.lapses ||
			got.flaps != w.flaps || got.c401 != w.c401 || got.c407 != w.c407 || got.requests != w.requests || got.retransmits != w.retransmits ||
			got.contact != w.contact || got.kind != w.kind {
			t.Errorf("%s:\n got %+v\nwant %+v", aor, got, w)
		}
	}
	trunk := kindOf["sip:4420790000@sip.provider.example"]
	if !slices.Equal(trunk.Reasons, []string{ReasonPBXAgent, ReasonRegistrar}) {
		t.Errorf("trunk reasons %v", trunk.Reasons)
	}
	// The trunk's grant came in an Expires header: 120 s from its last 200.
	tr := rows["sip:4420790000@sip.provider.example"]
	if len(tr.Contacts) == 1 && tr.Contacts[0].Expires != 120 {
		t.Errorf("trunk contact expires %d, want 120 (Expires header)", tr.Contacts[0].Expires)
	}
	// Judged before 1001's grant and its grace ran out, it is still
	// registered.
	for _, row := range v.Rows {
		if row.AoR == "sip:1001@pbx.example.com" {
			if s := row.At(row.ExpiresAt.Add(LapseGrace - time.Second)); s.State() != RegRegistered || s.Lapses != 0 {
				t.Errorf("1001 a second after its refresh: %s, %d lapses", s.State(), s.Lapses)
			}
		}
	}
}

// regMsg adds one SIP message, sent at base plus secs, to st.
func regMsg(t *testing.T, st *Store, secs float64, text string) {
	t.Helper()
	var p Parsed
	text = strings.ReplaceAll(text, "\n", "\r\n") + "\r\n"
	if err := p.Parse([]byte(text)); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st.Add(Meta{Time: base.Add(time.Duration(secs * float64(time.Second)))}, &p, []byte(text))
}

// TestRefreshAnsweredAfterExpiry: a refresh sent before the grant and its
// grace ran out and answered after is neither a lapse nor a flap.
func TestRefreshAnsweredAfterExpiry(t *testing.T) {
	st := newStore(t, Limits{})
	req := func(cseq string) string {
		return "REGISTER sip:x SIP/2.0\nVia: SIP/2.0/UDP h;branch=z9hG4bK" + cseq + "\nTo: <sip:1@x>\nFrom: <sip:1@x>;tag=a\nCall-ID: c\nCSeq: " + cseq + " REGISTER\nContact: <sip:1@h>\nExpires: 60\nContent-Length: 0\n"
	}
	ok := func(cseq string) string {
		return "SIP/2.0 200 OK\nVia: SIP/2.0/UDP h;branch=z9hG4bK" + cseq + "\nTo: <sip:1@x>;tag=b\nFrom: <sip:1@x>;tag=a\nCall-ID: c\nCSeq: " + cseq + " REGISTER\nContact: <sip:1@h>;expires=60\nContent-Length: 0\n"
	}
	regMsg(t, st, 0, req("1"))
	regMsg(t, st, 0.1, ok("1"))
	regMsg(t, st, 91.9, req("2"))
	regMsg(t, st, 92.3, ok("2"))
	v := st.Registrations()
	r := v.Rows[0].At(v.Latest)
	if r.State() != RegRegistered || r.Lapses != 0 || r.Flaps != 0 || r.Successes != 2 {
		t.Errorf("%s, %d lapses, %d flaps, %d successes; want registered, 0, 0, 2", r.State(), r.Lapses, r.Flaps, r.Successes)
	}
	// Unanswered, the same refresh is a failure at its timeout, not a lapse.
	st = newStore(t, Limits{})
	regMsg(t, st, 0, req("1"))
	regMsg(t, st, 0.1, ok("1"))
	regMsg(t, st, 91.9, req("2"))
	regMsg(t, st, 140, "OPTIONS sip:x SIP/2.0\nTo: <sip:1@x>\nFrom: <sip:2@x>;tag=z\nCall-ID: o\nCSeq: 1 OPTIONS\nContent-Length: 0\n")
	v = st.Registrations()
	for _, row := range v.Rows {
		if r := row.At(v.Latest); r.State() != RegFailed || r.NoAnswer != 1 || r.Lapses != 0 {
			t.Errorf("%s, %d no answer, %d lapses; want failed, 1, 0", r.State(), r.NoAnswer, r.Lapses)
		}
	}
}

func TestRegistrationTableBound(t *testing.T) {
	st := newStore(t, Limits{})
	var p Parsed
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range MaxRegistrations + 10 {
		msg := "REGISTER sip:x SIP/2.0\r\nVia: SIP/2.0/UDP 192.0.2.9;branch=z9hG4bK" + strings.Repeat("a", i%7) + "\r\n" +
			"To: <sip:u" + strconv.Itoa(i) + "@x>\r\nFrom: <sip:u" + strconv.Itoa(i) + "@x>;tag=1\r\nCall-ID: c" + strconv.Itoa(i) + "\r\nCSeq: 1 REGISTER\r\nContent-Length: 0\r\n\r\n"
		if err := p.Parse([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		st.Add(Meta{Time: at.Add(time.Duration(i) * time.Second)}, &p, []byte(msg))
	}
	v := st.Registrations()
	if len(v.Rows) != MaxRegistrations || v.Evicted != 10 {
		t.Fatalf("%d rows, %d evicted; want %d and 10", len(v.Rows), v.Evicted, MaxRegistrations)
	}
	for _, r := range v.Rows {
		if r.AoR == "sip:u0@x" {
			t.Fatal("the least recently seen AoR was kept")
		}
	}
}

func TestAoROf(t *testing.T) {
	for in, want := range map[string]string{
		`"Ivan" <sip:Ivan@Verso.COM;transport=udp>;tag=1`: "sip:Ivan@verso.com",
		`<SIPS:1001@PBX.example.com:5061?x=y>`:            "sips:1001@pbx.example.com:5061",
		`sip:trunk.example.net;lr`:                        "sip:trunk.example.net",
		`tel:+4420790000`:                                 "tel:+4420790000",
		`<>`:                                              "",
		`nothing`:                                         "",
	} {
		if got := AoROf([]byte(in)); got != want {
			t.Errorf("AoROf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitContacts(t *testing.T) {
	var got []string
	splitContacts([]byte(`"a, b" <sip:1@x;p=1,2>;expires=60, <sip:2@y>;expires=30 ,sip:3@z,`), func(c []byte) bool {
		got = append(got, string(c))
		return true
	})
	want := []string{`"a, b" <sip:1@x;p=1,2>;expires=60`, `<sip:2@y>;expires=30`, `sip:3@z`}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzRegistrations feeds arbitrary REGISTER answers and requests to the
// table: no panic, bounded rows and contacts, and an expiry never before
// the message's time.
func FuzzRegistrations(f *testing.F) {
	f.Add([]byte("SIP/2.0 200 OK\r\nTo: <sip:1@x>\r\nFrom: <sip:1@x>;tag=a\r\nCall-ID: c\r\nCSeq: 1 REGISTER\r\nContact: <sip:1@h>;expires=60, \"q,\" <sip:2@h>\r\nExpires: 30\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("REGISTER sip:x SIP/2.0\r\nTo: <sip:1@x>\r\nFrom: <sip:1@x>;tag=a\r\nCall-ID: c\r\nCSeq: 1 REGISTER\r\nContact: *\r\nExpires: 0\r\nContent-Length: 0\r\n\r\n"))
	f.Add([]byte("SIP/2.0 401 Unauthorized\r\nt: sip:1@x\r\nf: <sip:1@x>;tag=a\r\ni: c\r\nCSeq: 1 REGISTER\r\nm: <sip:1@h>;expires=99999999999\r\nl: 0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st := newStore(t, Limits{})
		var p Parsed
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i, part := range bytes.SplitAfter(b, []byte("\r\n\r\n")) {
			if p.Parse(part) != nil || p.Validate() != nil {
				continue
			}
			st.Add(Meta{Time: at.Add(time.Duration(i) * time.Second)}, &p, part)
		}
		v := st.Registrations()
		for _, r := range v.Rows {
			r = r.At(v.Latest)
			if len(r.Contacts) > maxRegContacts || len(r.AoR) > maxRegText || r.State() == "" {
				t.Fatalf("row %+v", r)
			}
			for _, c := range r.Contacts {
				if c.Expires >= 0 && c.ExpiresAt.Before(at) {
					t.Fatalf("contact %+v expires before the capture began", c)
				}
			}
		}
		Kinds(v.Rows)
	})
}

// TestUnregistrationIsPerContact: a contact's expires parameter wins over
// the Expires header (RFC 3261 §10.2.1.1), so Expires: 0 with a contact
// asking an hour registers; Contact: * unregisters.
func TestUnregistrationIsPerContact(t *testing.T) {
	st := newStore(t, Limits{})
	msg := func(cseq, contact, expires string) string {
		return "REGISTER sip:x SIP/2.0\nVia: SIP/2.0/UDP h;branch=z9hG4bK" + cseq + "\nTo: <sip:1@x>\nFrom: <sip:1@x>;tag=a\nCall-ID: c\nCSeq: " + cseq + " REGISTER\nContact: " + contact + "\nExpires: " + expires + "\nContent-Length: 0\n"
	}
	ok := func(cseq, contact string) string {
		return "SIP/2.0 200 OK\nVia: SIP/2.0/UDP h;branch=z9hG4bK" + cseq + "\nTo: <sip:1@x>;tag=b\nFrom: <sip:1@x>;tag=a\nCall-ID: c\nCSeq: " + cseq + " REGISTER\n" + contact + "Content-Length: 0\n"
	}
	regMsg(t, st, 0, msg("1", "<sip:1@h>;expires=3600", "0"))
	regMsg(t, st, 0.1, ok("1", ""))
	v := st.Registrations()
	if r := v.Rows[0].At(v.Latest); r.State() != RegRegistered || r.Unregistrations != 0 || len(r.Contacts) != 1 || r.Contacts[0].Expires != 3600 {
		t.Errorf("%s, %d unregistrations, contacts %+v; want registered for 3600 s", r.State(), r.Unregistrations, r.Contacts)
	}
	regMsg(t, st, 10, msg("2", "*", "0"))
	regMsg(t, st, 10.1, ok("2", ""))
	v = st.Registrations()
	if r := v.Rows[0].At(v.Latest); r.State() != RegUnregistered || r.Unregistrations != 1 || len(r.Contacts) != 0 {
		t.Errorf("%s, %d unregistrations, contacts %+v; want unregistered", r.State(), r.Unregistrations, r.Contacts)
	}
}
