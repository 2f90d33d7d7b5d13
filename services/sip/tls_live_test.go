package sip

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/tlsdecrypt"
	"fieldtap/tools/freeport"
)

// liveOutput collects a program's output for the test to wait on.
type liveOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *liveOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *liveOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor polls until cond holds; the bound only stops a hung program
// from hanging the test, it is no assertion on time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// liveCapture runs dumpcap on loopback for tcp port port, writing the
// capture to path, and counts the TCP FINs it has seen.
type liveCapture struct {
	cmd  *exec.Cmd
	err  liveOutput
	mu   sync.Mutex
	fins int
	done chan error
}

func startCapture(t *testing.T, port int, path string) *liveCapture {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	c := &liveCapture{done: make(chan error, 1)}
	// To a pipe dumpcap flushes every packet, so what the test reads is
	// what it has captured.
	c.cmd = exec.Command("dumpcap", "-q", "-i", "lo", "-f", "tcp port "+strconv.Itoa(port), "-w", "-")
	c.cmd.Stderr = &c.err
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Skipf("dumpcap not started: %v", err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	go func() {
		rd, err := pcapfile.NewReader(io.TeeReader(out, f))
		if err != nil {
			c.done <- err
			return
		}
		for {
			rec, err := rd.Next()
			if err != nil {
				c.done <- err
				return
			}
			if tcpFIN(rec.Data) {
				c.mu.Lock()
				c.fins++
				c.mu.Unlock()
			}
		}
	}()
	waitFor(t, "dumpcap to capture", func() bool { return strings.Contains(c.err.String(), "Capturing on") })
	return c
}

// tcpFIN says whether an Ethernet frame of loopback is a TCP FIN.
func tcpFIN(b []byte) bool {
	if len(b) < 14+20 || binary.BigEndian.Uint16(b[12:]) != 0x0800 {
		return false
	}
	ip := b[14:]
	hl := int(ip[0]&0x0f) * 4
	if ip[9] != 6 || len(ip) < hl+14 {
		return false
	}
	return ip[hl+13]&0x01 != 0
}

func (c *liveCapture) stop(t *testing.T) {
	t.Helper()
	waitFor(t, "both FINs in the capture", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.fins >= 2
	})
	c.cmd.Process.Signal(syscall.SIGINT)
	if err := <-c.done; !errors.Is(err, io.EOF) {
		t.Fatalf("reading dumpcap: %v (%s)", err, c.err.String())
	}
	c.cmd.Wait()
}

// sipMsg is a SIP message of the live call, with CRLF line ends.
func sipMsg(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n\r\n" }

func liveInvite(callID string) string {
	sdp := "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\n"
	return sipMsg("INVITE sip:bob@sip.test SIP/2.0", "Via: SIP/2.0/TLS 127.0.0.1;branch=z9hG4bK-"+callID,
		"From: <sip:alice@sip.test>;tag=a1", "To: <sip:bob@sip.test>", "Call-ID: "+callID, "CSeq: 1 INVITE",
		"Max-Forwards: 70", "Contact: <sip:alice@127.0.0.1;transport=tls>", "Content-Type: application/sdp",
		"Content-Length: "+strconv.Itoa(len(sdp))) + sdp
}

func liveResponse(callID, status, method string, cseq int) string {
	return sipMsg("SIP/2.0 "+status, "Via: SIP/2.0/TLS 127.0.0.1;branch=z9hG4bK-"+callID,
		"From: <sip:alice@sip.test>;tag=a1", "To: <sip:bob@sip.test>;tag=b1", "Call-ID: "+callID,
		fmt.Sprintf("CSeq: %d %s", cseq, method), "Content-Length: 0")
}

func liveRequest(callID, method string, cseq int) string {
	return sipMsg(method+" sip:bob@sip.test SIP/2.0", "Via: SIP/2.0/TLS 127.0.0.1;branch=z9hG4bK-"+callID+method,
		"From: <sip:alice@sip.test>;tag=a1", "To: <sip:bob@sip.test>;tag=b1", "Call-ID: "+callID,
		fmt.Sprintf("CSeq: %d %s", cseq, method), "Max-Forwards: 70", "Content-Length: 0")
}

// TestTLSLiveOpenSSL carries a SIP call between openssl s_client and
// s_server on loopback, over TLS 1.2 and 1.3 with each AEAD suite,
// captures it with dumpcap, and reads the capture with s_client's key
// log: the analyser must find the messages tshark finds with the same
// keys. The TLS 1.3 AES-256 run updates its keys both ways mid-call
// (s_client's K command).
func TestTLSLiveOpenSSL(t *testing.T) {
	for _, prog := range []string{"openssl", "dumpcap", "tshark"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s not installed", prog)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("dumpcap needs root to capture on loopback here")
	}
	dir := t.TempDir()
	key, cert := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	if out, err := exec.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
		"-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=sip.test").CombinedOutput(); err != nil {
		t.Fatalf("openssl req: %v\n%s", err, out)
	}
	cases := []struct {
		name      string
		args      []string
		keyUpdate bool
	}{
		{"tls12-ecdhe-aes128-gcm", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"}, false},
		{"tls12-ecdhe-aes256-gcm", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES256-GCM-SHA384"}, false},
		{"tls12-ecdhe-chacha20", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305"}, false},
		{"tls13-aes128-gcm", []string{"-tls1_3", "-ciphersuites", "TLS_AES_128_GCM_SHA256"}, false},
		{"tls13-aes256-gcm", []string{"-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384"}, true},
		{"tls13-chacha20", []string{"-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"}, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			callID := fmt.Sprintf("live-%d@sip.test", i)
			port := freeport.Pick(t, "tcp")
			capPath, keyLog := filepath.Join(dir, tc.name+".pcapng"), filepath.Join(dir, tc.name+".keys")
			capt := startCapture(t, port, capPath)

			var sOut, cOut liveOutput
			srv := exec.Command("openssl", append([]string{"s_server", "-accept", "127.0.0.1:" + strconv.Itoa(port),
				"-cert", cert, "-key", key}, tc.args...)...)
			srv.Stdout, srv.Stderr = &sOut, &sOut
			sIn, _ := srv.StdinPipe()
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
			waitFor(t, "s_server to accept", func() bool { return strings.Contains(sOut.String(), "ACCEPT") })

			cli := exec.Command("openssl", append([]string{"s_client", "-connect", "127.0.0.1:" + strconv.Itoa(port),
				"-keylogfile", keyLog, "-no_ign_eof"}, tc.args...)...)
			cli.Stdout, cli.Stderr = &cOut, &cOut
			cIn, _ := cli.StdinPipe()
			if err := cli.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cli.Process.Kill(); cli.Wait() })
			waitFor(t, "the handshake", func() bool {
				return strings.Contains(cOut.String(), "---\n") && strings.Contains(sOut.String(), "CIPHER is")
			})

			say := func(w io.Writer, text string, seen *liveOutput, mark string) {
				t.Helper()
				if _, err := io.WriteString(w, text); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the other side to read "+strconv.Quote(mark)+" in:\n"+tail(seen), func() bool { return strings.Contains(seen.String(), mark) })
			}
			say(cIn, liveInvite(callID), &sOut, "CSeq: 1 INVITE")
			say(sIn, liveResponse(callID, "100 Trying", "INVITE", 1), &cOut, "100 Trying")
			say(sIn, liveResponse(callID, "200 OK", "INVITE", 1), &cOut, "200 OK")
			if tc.keyUpdate {
				// K: the client updates its keys and asks the server to
				// update its own (RFC 8446 §4.6.3 update_requested).
				say(cIn, "K\n", &cOut, "KEYUPDATE")
			}
			say(cIn, liveRequest(callID, "ACK", 1), &sOut, "CSeq: 1 ACK")
			say(cIn, liveRequest(callID, "BYE", 2), &sOut, "CSeq: 2 BYE")
			say(sIn, liveResponse(callID, "200 OK", "BYE", 2), &cOut, "CSeq: 2 BYE")
			cIn.Close() // s_client ends the session: close_notify, FIN
			if err := cli.Wait(); err != nil {
				t.Fatalf("s_client: %v\n%s", err, cOut.String())
			}
			capt.stop(t)

			// openssl writes the key log as its umask allows; the box reads
			// only a key log kept from others.
			if err := os.Chmod(keyLog, 0o600); err != nil {
				t.Fatal(err)
			}
			text, err := tlsdecrypt.ReadKeyLogFile(keyLog)
			if err != nil {
				t.Fatal(err)
			}
			keys := tlsdecrypt.NewKeys(0)
			if err := keys.Add(text); err != nil {
				t.Fatal(err)
			}
			st, a := loadWithSecrets(t, capPath, keys) // a live capture has no secrets block: the key log is the keys
			snap := st.Snapshot()
			wantReq, wantResp := tsharkSIP(t, capPath, keyLog, port)
			if len(wantReq) == 0 || len(wantResp) == 0 {
				t.Fatalf("tshark found requests %v responses %v: the reference is empty", wantReq, wantResp)
			}
			if !maps.Equal(snap.Stats.Requests, wantReq) || !maps.Equal(snap.Stats.Responses, wantResp) {
				t.Errorf("requests %v responses %v; tshark: %v %v", snap.Stats.Requests, snap.Stats.Responses, wantReq, wantResp)
			}
			ss, _ := a.Stats()
			if ss.TLSDecrypted != 2 || ss.TLSFlows.Failed+ss.TLSFlows.NoKeys+ss.TLSFlows.Lost != 0 {
				t.Errorf("TLS: decrypted streams %d, flows %+v", ss.TLSDecrypted, ss.TLSFlows)
			}
			t.Logf("tshark %v %v; TLS %+v", wantReq, wantResp, ss.TLSFlows)
		})
	}
}

// tail is the end of a program's output, for a failure message.
func tail(o *liveOutput) string {
	s := o.String()
	return s[max(0, len(s)-600):]
}

// tsharkSIP is tshark's count of the SIP requests and responses in a
// capture decrypted with keyLog, keyed as the store keys them.
func tsharkSIP(t *testing.T, capPath, keyLog string, port int) (req, resp map[string]uint64) {
	t.Helper()
	p := strconv.Itoa(port)
	out, err := exec.Command("tshark", "-r", capPath, "-o", "tls.keylog_file:"+keyLog,
		"-d", "tcp.port=="+p+",tls", "-d", "tls.port=="+p+",sip", "-Y", "sip",
		"-T", "fields", "-E", "occurrence=f", "-e", "sip.Method", "-e", "sip.Status-Code", "-e", "sip.CSeq.method").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	req, resp = map[string]uint64{}, map[string]uint64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			continue
		}
		if f[0] != "" {
			req[f[0]]++
		} else {
			resp[f[1]+" "+f[2]]++
		}
	}
	return req, resp
}
