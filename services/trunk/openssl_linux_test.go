package trunk

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/tools/refdata"
)

// TestOpenSSLHandshakesMatchOpenSSLAndTshark: openssl s_server (TLS 1.2,
// one cipher suite, a self-signed certificate valid 3 days) on 5061 in a
// private network namespace, two s_client connections, captured on the
// namespace's lo by dumpcap: the first completes, and trunk health gives
// the certificate's subject, issuer and expiry as openssl x509 prints
// them and tshark reads them; the second asks a suite the server
// refuses, and its fatal handshake_failure alert is tshark's.
func TestOpenSSLHandshakesMatchOpenSSLAndTshark(t *testing.T) {
	for _, prog := range []string{"openssl", "dumpcap", "ip", "tshark"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed", prog)
		}
	}
	ns := testNetns(t)
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	run(t, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "3",
		"-subj", "/CN=trunk.example.test/O=Fieldtap Test")
	capture := filepath.Join(dir, "tls.pcapng")

	dump := start(t, "Capturing on", "ip", "netns", "exec", ns, "dumpcap", "-i", "lo", "-w", capture)
	srv := start(t, "ACCEPT", "ip", "netns", "exec", ns, "openssl", "s_server", "-accept", "5061", "-cert", cert, "-key", key,
		"-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256")
	client := func(args ...string) {
		c := exec.Command("ip", append([]string{"netns", "exec", ns, "openssl", "s_client", "-connect", "127.0.0.1:5061", "-tls1_2"}, args...)...)
		c.Stdin = strings.NewReader("") // end of input: close once the handshake is over
		c.Run()                         // the refused one exits 1
	}
	client("-servername", "trunk.example.test")
	client("-cipher", "AES256-SHA")
	srv.stop()
	// A marker connection to a closed port: once it is in the file, the
	// handshakes before it are too.
	exec.Command("ip", "netns", "exec", ns, "openssl", "s_client", "-connect", "127.0.0.1:9").Run()
	for !holdsReset(t, capture, 9) {
		time.Sleep(50 * time.Millisecond)
	}
	dump.stop()

	flows, _ := feedFile(t, capture).Flows()
	if len(flows) != 2 {
		t.Fatalf("%d flows on 5061, want the 2 connections", len(flows))
	}
	ok, refused := flows[0], flows[1]

	// The completed handshake against openssl x509 and tshark.
	if ok.Outcome() != "completed" || ok.TLS.Version != tls.VersionTLS12 || tls.CipherSuiteName(ok.TLS.Cipher) != "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256" ||
		ok.TLS.SNI != "trunk.example.test" {
		t.Errorf("first connection: outcome %s, version %s, cipher %s, SNI %q, problem %q", ok.Outcome(), tls.VersionName(ok.TLS.Version),
			tls.CipherSuiteName(ok.TLS.Cipher), ok.TLS.SNI, ok.TLS.Problem)
	}
	c := ok.TLS.Cert
	if c == nil {
		t.Fatalf("no certificate read; problem %q", ok.TLS.Problem)
	}
	x509 := run(t, "openssl", "x509", "-in", cert, "-noout", "-subject", "-issuer", "-enddate", "-nameopt", "RFC2253")
	notAfter, err := time.Parse("Jan _2 15:04:05 2006 MST", field(t, x509, "notAfter="))
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != field(t, x509, "subject=") || c.Issuer != field(t, x509, "issuer=") || !c.NotAfter.Equal(notAfter) || c.Chain != 1 {
		t.Errorf("certificate %+v\nopenssl x509:\n%s", c, x509)
	}
	if days := math.Floor(c.NotAfter.Sub(c.SeenAt).Hours() / 24); days != 2 {
		t.Errorf("%v days to expiry from %v: want 2, a 3-day certificate made seconds ago", days, c.SeenAt)
	}
	shark := tshark(t, capture, "tls.handshake.type == 11", "x509sat.uTF8String", "x509af.utcTime")
	if len(shark) != 1 {
		t.Fatalf("tshark sees %d Certificate messages, want 1", len(shark))
	}
	names, times := shark[0][0], strings.Split(shark[0][1], ",")
	if names != "trunk.example.test,Fieldtap Test,trunk.example.test,Fieldtap Test" || len(times) != 2 ||
		!strings.HasPrefix(times[1], notAfter.Format("2006-01-02 15:04:05")) {
		t.Errorf("tshark reads the certificate's names %q and validity %q; openssl's notAfter is %v", names, times, notAfter)
	}

	// The refused one: its alert is tshark's.
	alerts := tshark(t, capture, "tls.alert_message.desc", "tcp.srcport", "tls.alert_message.level", "tls.alert_message.desc")
	if refused.Outcome() != "alert" || len(refused.TLS.Alerts) != 1 || len(alerts) != 1 {
		t.Fatalf("refused connection: outcome %s, alerts %+v; tshark %v", refused.Outcome(), refused.TLS.Alerts, alerts)
	}
	a := refused.TLS.Alerts[0]
	got := []string{strconv.Itoa(int(refused.Server.Port())), strconv.Itoa(int(a.Level)), strconv.Itoa(int(a.Desc))}
	if !a.FromServer || a.Encrypted || fmt.Sprint(got) != fmt.Sprint(alerts[0]) || AlertName(a.Desc) != "handshake_failure" || LevelName(a.Level) != "fatal" {
		t.Errorf("alert %+v (%s %s), tshark [port level desc] %v", a, LevelName(a.Level), AlertName(a.Desc), alerts[0])
	}
}

// testNetns makes a network namespace with lo up, deleted at cleanup.
// Traffic in it never leaves it. It skips unless root can run ip netns.
func testNetns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("ip netns needs root")
	}
	name := fmt.Sprintf("fttrunk%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add does not work here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v %s", err, out)
	}
	return name
}

// run runs a command to its end and returns its output.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// field is the rest of the line of out that starts with prefix.
func field(t *testing.T, out, prefix string) string {
	t.Helper()
	for l := range strings.SplitSeq(out, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return v
		}
	}
	t.Fatalf("no %q line in:\n%s", prefix, out)
	return ""
}

// started is a program the test runs in the background.
type started struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
}

// start runs a program and returns once it printed ready (on stdout or
// stderr); its input stays open until stop, which interrupts it and
// waits for it to end.
func start(t *testing.T, ready, name string, args ...string) *started {
	t.Helper()
	cmd := exec.Command(name, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &started{cmd: cmd, stdin: in, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		w.Close()
		close(s.done)
	}()
	t.Cleanup(s.stop)
	sc := bufio.NewScanner(r)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), ready) {
			go io.Copy(io.Discard, r)
			return s
		}
	}
	t.Fatalf("%s ended before saying %q: %s", name, ready, strings.Join(seen, "\n"))
	return nil
}

func (s *started) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(os.Interrupt)
	s.stdin.Close()
	<-s.done
}

// holdsReset reports whether the capture holds a segment from port.
func holdsReset(t *testing.T, path string, port uint16) bool {
	t.Helper()
	found := false
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	f.Close()
	func() {
		defer func() { recover() }() // a file dumpcap is still writing may end mid-block
		refdata.EachRecord(t, path, func(rec pcapfile.Record) {
			if d := rec.Data; len(d) >= 14+20+4 && d[14+20] == byte(port>>8) && d[14+20+1] == byte(port) {
				found = true
			}
		})
	}()
	return found
}
