//go:build linux

package main

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"fieldtap/board/sim/sipgen"
	"fieldtap/drivers/wire"
	"fieldtap/tools/freeport"
	"fieldtap/tools/refdata"
)

// homerSchema is the part of HOMER's capture schema Kamailio's
// sipcapture writes (the columns of sip_capture_store and
// receive_logging_json_msg in Kamailio 5.6); the .deb ships none.
const homerSchema = `
CREATE TABLE sip_capture (
  id BIGSERIAL PRIMARY KEY, date TIMESTAMP NOT NULL, micro_ts BIGINT NOT NULL,
  method TEXT NOT NULL DEFAULT '', reply_reason TEXT NOT NULL DEFAULT '', ruri TEXT NOT NULL DEFAULT '',
  ruri_user TEXT NOT NULL DEFAULT '', ruri_domain TEXT NOT NULL DEFAULT '', from_user TEXT NOT NULL DEFAULT '',
  from_domain TEXT NOT NULL DEFAULT '', from_tag TEXT NOT NULL DEFAULT '', to_user TEXT NOT NULL DEFAULT '',
  to_domain TEXT NOT NULL DEFAULT '', to_tag TEXT NOT NULL DEFAULT '', pid_user TEXT NOT NULL DEFAULT '',
  contact_user TEXT NOT NULL DEFAULT '', auth_user TEXT NOT NULL DEFAULT '', callid TEXT NOT NULL DEFAULT '',
  callid_aleg TEXT NOT NULL DEFAULT '', via_1 TEXT NOT NULL DEFAULT '', via_1_branch TEXT NOT NULL DEFAULT '',
  cseq TEXT NOT NULL DEFAULT '', diversion TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '',
  content_type TEXT NOT NULL DEFAULT '', auth TEXT NOT NULL DEFAULT '', user_agent TEXT NOT NULL DEFAULT '',
  source_ip TEXT NOT NULL DEFAULT '', source_port INTEGER NOT NULL, destination_ip TEXT NOT NULL DEFAULT '',
  destination_port INTEGER NOT NULL, contact_ip TEXT NOT NULL DEFAULT '', contact_port INTEGER NOT NULL,
  originator_ip TEXT NOT NULL DEFAULT '', originator_port INTEGER NOT NULL, correlation_id TEXT NOT NULL DEFAULT '',
  custom_field1 TEXT NOT NULL DEFAULT '', custom_field2 TEXT NOT NULL DEFAULT '', custom_field3 TEXT NOT NULL DEFAULT '',
  proto INTEGER NOT NULL, family INTEGER, rtp_stat TEXT NOT NULL DEFAULT '', type INTEGER NOT NULL,
  node TEXT NOT NULL DEFAULT '', msg BYTEA NOT NULL);
CREATE TABLE rtcp_capture (
  id BIGSERIAL PRIMARY KEY, date TIMESTAMP NOT NULL, micro_ts BIGINT NOT NULL,
  correlation_id TEXT NOT NULL DEFAULT '', source_ip TEXT NOT NULL DEFAULT '', source_port INTEGER NOT NULL,
  destination_ip TEXT NOT NULL DEFAULT '', destination_port INTEGER NOT NULL, proto INTEGER NOT NULL,
  family INTEGER, type INTEGER NOT NULL, node TEXT NOT NULL DEFAULT '', msg BYTEA NOT NULL);
`

// postgres is a throwaway PostgreSQL cluster started by the test.
type postgres struct {
	bin, root, dir string // root holds the cluster (dir), its socket and log
	port           int
	cred           *syscall.Credential // run as the postgres user when the test is root
}

// cmd runs a PostgreSQL program in root, which its user owns: the test's
// own working directory is in the checkout, which the postgres user may
// not reach (a checkout in a 0700 folder, as root's home is).
func (p *postgres) cmd(name string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(p.bin, name), args...)
	c.Dir = p.root
	if p.cred != nil {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	}
	c.Env = append(os.Environ(), "PGHOST=127.0.0.1", "PGPORT="+strconv.Itoa(p.port), "PGUSER=postgres")
	return c
}

// psql runs one statement and returns its unaligned, tuples-only output.
// Anything psql says on stderr fails the test with it, so a warning (a
// folder its user cannot enter) is the reason given, not part of an
// answer read as a count.
func (p *postgres) psql(t *testing.T, db, sql string) string {
	t.Helper()
	var stderr bytes.Buffer
	c := p.cmd("psql", "-X", "-v", "ON_ERROR_STOP=1", "-A", "-t", "-d", db, "-c", sql)
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("psql %q: %v\n%s%s", sql, err, out, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

// count runs a SELECT count(*) and fails the test when the answer is not
// a number.
func (p *postgres) count(t *testing.T, db, sql string) int {
	t.Helper()
	out := p.psql(t, db, sql)
	n, err := strconv.Atoi(out)
	if err != nil {
		t.Fatalf("psql %q answered %q, not a count", sql, out)
	}
	return n
}

// startPostgres runs initdb and pg_ctl from Debian's postgresql in a
// temporary folder on a free loopback port, or skips.
func startPostgres(t *testing.T) *postgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(bins) == 0 {
		t.Skip("PostgreSQL not installed (Debian package postgresql; .ci/run installs it)")
	}
	slices.Sort(bins)
	p := &postgres{bin: filepath.Dir(bins[len(bins)-1]), port: freeport.Pick(t, "tcp")}
	// A folder of the cluster's own, not t.TempDir: the postgres user
	// must own it, and reach it from /.
	root, err := os.MkdirTemp("", "fieldtap-pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	p.root, p.dir = root, filepath.Join(root, "data")
	if os.Geteuid() == 0 { // initdb refuses root
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root and there is no postgres user to run PostgreSQL as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(root, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := p.cmd("initdb", "-D", p.dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb as the postgres user in %s (it must reach and own that folder): %v\n%s", root, err, out)
	}
	opts := fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -k %s -c fsync=off", p.port, root)
	if out, err := p.cmd("pg_ctl", "-D", p.dir, "-o", opts, "-l", filepath.Join(root, "log"), "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(root, "log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	t.Cleanup(func() { _ = p.cmd("pg_ctl", "-D", p.dir, "-m", "fast", "-w", "stop").Run() })
	p.psql(t, "postgres", "CREATE DATABASE homer")
	p.psql(t, "homer", homerSchema)
	return p
}

// startKamailio runs Kamailio's sipcapture on a free loopback UDP port
// writing to pg, or skips.
func startKamailio(t *testing.T, pg *postgres) int {
	t.Helper()
	bin, err := exec.LookPath("kamailio")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/kamailio"); err != nil {
			t.Skip("kamailio not installed (Debian packages kamailio and kamailio-postgres-modules; .ci/run installs them)")
		}
		bin = "/usr/sbin/kamailio"
	}
	mods, _ := filepath.Glob("/usr/lib/*/kamailio/modules/sipcapture.so")
	pgmod, _ := filepath.Glob("/usr/lib/*/kamailio/modules/db_postgres.so")
	if len(mods) == 0 || len(pgmod) == 0 {
		t.Skip("kamailio's sipcapture.so or db_postgres.so is missing (Debian packages kamailio, kamailio-postgres-modules)")
	}
	port := freeport.Pick(t, "udp")
	dir := t.TempDir()
	cfg := fmt.Sprintf(`#!KAMAILIO
debug=2
log_stderror=yes
fork=yes
children=1
disable_tcp=yes
auto_aliases=no
listen=udp:127.0.0.1:%d
mpath="%s"
loadmodule "db_postgres.so"
loadmodule "sipcapture.so"
modparam("sipcapture", "db_url", "postgres://postgres:trust@127.0.0.1:%d/homer")
modparam("sipcapture", "capture_on", 1)
modparam("sipcapture", "hep_capture_on", 1)
modparam("sipcapture", "capture_node", "homer-test")
request_route { sip_capture(); drop; }
onreply_route { sip_capture(); drop; }
`, port, filepath.Dir(mods[0]), pg.port)
	log := runKamailio(t, bin, dir, cfg)
	probeKamailio(t, pg, port, log)
	return port
}

// probeKamailio sends one HEP message until it is in the database, so
// the test's traffic finds Kamailio's worker and its connection ready,
// then removes it.
func probeKamailio(t *testing.T, pg *postgres, port int, log *lockedBuffer) {
	t.Helper()
	conn, err := net.Dial("udp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msg := "OPTIONS sip:probe@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.0.1:5060;branch=z9hG4bK-probe\r\nFrom: <sip:probe@127.0.0.1>;tag=1\r\n" +
		"To: <sip:probe@127.0.0.1>\r\nCall-ID: fieldtap-probe\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
	pkt, err := wire.AppendHEP(nil, &wire.HEPPacket{Src: netip.MustParseAddrPort("127.0.0.1:5060"), Dst: netip.MustParseAddrPort("127.0.0.1:5061"),
		Proto: wire.HEPProtoUDP, Time: time.Now(), Type: wire.HEPTypeSIP, Payload: []byte(msg)})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(giveUp)
	for pg.count(t, "homer", "SELECT count(*) FROM sip_capture WHERE callid = 'fieldtap-probe'") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("kamailio never stored a probe message:\n%s", log.String())
		}
		if _, err := conn.Write(pkt); err != nil {
			t.Logf("probe: %v", err) // refused until kamailio listens
		}
		time.Sleep(200 * time.Millisecond)
	}
	pg.psql(t, "homer", "DELETE FROM sip_capture")
}

// tsharkSIP is what tshark finds in a capture: its SIP messages (one
// per frame in these captures) and distinct Call-IDs, sorted; ok is
// false when tshark is not installed.
func tsharkSIP(t *testing.T, path string) (messages int, ids []string, ok bool) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		return 0, nil, false
	}
	out, err := exec.Command("tshark", "-r", path, "-Y", "sip", "-T", "fields", "-e", "sip.Call-ID").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	for _, l := range strings.Fields(string(out)) {
		messages++
		if !slices.Contains(ids, l) {
			ids = append(ids, l)
		}
	}
	slices.Sort(ids)
	return messages, ids, true
}

// callIDs are a reference capture's Call-IDs by tshark (nil without
// it); want is PROVENANCE.md's count, checked against tshark's.
func callIDs(t *testing.T, path string, want int) []string {
	t.Helper()
	_, ids, ok := tsharkSIP(t, path)
	if ok && len(ids) != want {
		t.Fatalf("tshark finds %d Call-IDs in %s, PROVENANCE.md says %d", len(ids), path, want)
	}
	return ids
}

// TestHEPToKamailioSipcapture exports two reference captures (the ground
// truth is PROVENANCE.md's) and a minute of the demo's generated calls
// (tshark's) from the real fieldtapd to Kamailio's
// sipcapture writing PostgreSQL, both started here: every SIP message
// arrives, with the captures' Call-IDs, and the RTCP reports arrive
// filed under their call's Call-ID.
func TestHEPToKamailioSipcapture(t *testing.T) {
	rtpProto := refdata.File(t, "sip", "RTP-Protocol.pcap")
	rejected := refdata.File(t, "sip", "sip-488-Not-Acceptable-Here-codec-null.pcapng")
	pg := startPostgres(t)
	kport := startKamailio(t, pg)
	wantMessages, wantCalls, wantRTCP := 9+13, 1+4, 2 // PROVENANCE.md
	want := append(callIDs(t, rtpProto, 1), callIDs(t, rejected, 4)...)
	sources := fmt.Sprintf("%q, %q", rtpProto, rejected)
	// The demo's generated minute is the third input, with tshark's count
	// of its messages and Call-IDs as the ground truth.
	demo := filepath.Join(t.TempDir(), "demo.pcapng")
	f, err := os.Create(demo)
	if err != nil {
		t.Fatal(err)
	}
	if err := sipgen.WritePcapng(f, sipgen.Options{Seed: 1, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Duration: time.Minute}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if n, ids, ok := tsharkSIP(t, demo); ok {
		wantMessages, wantCalls = wantMessages+n, wantCalls+len(ids)
		want = append(want, ids...)
		sources += fmt.Sprintf(", %q", demo)
	} else {
		t.Log("tshark not installed: the generated demo minute is left out (its ground truth is tshark's)")
	}
	slices.Sort(want)

	body := fmt.Sprintf("board = \"none\"\nsources = [%s]\n[status]\nlisten = [\"127.0.0.1:0\"]\n[hep]\nenabled = true\ncollector = \"127.0.0.1:%d\"\ncapture_id = 2001\nrtcp = true\n",
		sources, kport)
	d := startDaemon(t, body)
	deadline := time.Now().Add(giveUp)
	var rows int
	for {
		rows = pg.count(t, "homer", "SELECT count(*) FROM sip_capture")
		if rows >= wantMessages || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rows != wantMessages {
		t.Fatalf("sip_capture holds %d messages, want %d\n%s", rows, wantMessages, d.stderr)
	}
	got := strings.Fields(pg.psql(t, "homer", "SELECT DISTINCT callid FROM sip_capture ORDER BY callid"))
	if len(got) != wantCalls || (want != nil && !slices.Equal(got, want)) {
		t.Errorf("Call-IDs in sip_capture %q, want %d (tshark: %q)", got, wantCalls, want)
	}
	if n := pg.psql(t, "homer", "SELECT count(DISTINCT node) FROM sip_capture WHERE node = 'homer-test:2001'"); n != "1" {
		t.Errorf("capture id not recorded as the node's: %s", pg.psql(t, "homer", "SELECT DISTINCT node FROM sip_capture"))
	}
	rtpCall := pg.psql(t, "homer", "SELECT DISTINCT callid FROM sip_capture WHERE source_ip LIKE '10.33.6.%'")
	for deadline := time.Now().Add(giveUp); ; {
		n := pg.count(t, "homer", "SELECT count(*) FROM rtcp_capture")
		if n >= wantRTCP || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	rtcp := strings.Fields(pg.psql(t, "homer", "SELECT correlation_id FROM rtcp_capture"))
	if len(rtcp) < wantRTCP {
		t.Fatalf("rtcp_capture holds %d reports, want at least %d", len(rtcp), wantRTCP)
	}
	for _, c := range rtcp {
		if c != rtpCall {
			t.Errorf("RTCP filed under %q, want the call %q", c, rtpCall)
		}
	}
	if js := pg.psql(t, "homer", "SELECT convert_from(msg, 'UTF8') FROM rtcp_capture LIMIT 1"); !strings.Contains(js, `"report_blocks"`) {
		t.Errorf("RTCP report stored as %q, want HOMER's JSON", js)
	}
	t.Logf("sip_capture: %d messages, Call-IDs %v; rtcp_capture: %d reports under %s", rows, got, len(rtcp), rtpCall)
}

// runKamailio writes cfg to dir, checks it (kamailio -c), and runs
// Kamailio in the foreground of its own process group until the test
// ends; its log is shown when the test failed.
func runKamailio(t *testing.T, bin, dir, cfg string) *lockedBuffer {
	t.Helper()
	path := filepath.Join(dir, "kamailio.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("kamailio -c: %v\n%s", err, out)
	}
	log := &lockedBuffer{}
	k := exec.Command(bin, "-f", path, "-DD", "-E", "-P", filepath.Join(dir, "pid"), "-Y", dir)
	k.Stderr = log
	k.Stdout = log
	k.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := k.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-k.Process.Pid, syscall.SIGTERM)
		_ = k.Wait()
		if t.Failed() {
			t.Logf("kamailio:\n%s", log.String())
		}
	})
	return log
}
