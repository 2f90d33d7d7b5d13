package tlsdecrypt

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"os"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/tools/refdata"
)

// streams collects each TCP direction's bytes in order, in the order
// the directions first spoke.
type streams struct {
	order []netip.AddrPort
	bytes map[netip.AddrPort][]byte
}

func (s *streams) UDP(*netdecode.Datagram) {}

func (s *streams) TCP(st *netdecode.Stream, _ time.Time, data []byte) int {
	if _, ok := s.bytes[st.Src]; !ok {
		s.order = append(s.order, st.Src)
	}
	s.bytes[st.Src] = append(s.bytes[st.Src], data...)
	return len(data)
}

// referenceTLS is the TLS 1.3 reference capture's two TCP directions,
// client first, and the key log its Decryption Secrets Block carries.
func referenceTLS(t testing.TB) (client, server []byte, keyLog []byte) {
	t.Helper()
	f, err := os.Open(refdata.File(t, "sip", "gen-sipp-hold-resume-tls13-with-keys.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := pcapfile.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	rd.OnSecrets(func(typ uint32, data []byte) { keyLog = append(keyLog, data...) })
	s := &streams{bytes: map[netip.AddrPort][]byte{}}
	dec := netdecode.New(netdecode.Options{}, s)
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		dec.Decode(rec.Time, rec.Link, rec.Data)
	}
	if len(s.order) != 2 {
		t.Fatalf("%d TCP directions, want 2", len(s.order))
	}
	return s.bytes[s.order[0]], s.bytes[s.order[1]], keyLog
}

var (
	testClient = netip.MustParseAddrPort("127.0.0.1:5080")
	testServer = netip.MustParseAddrPort("127.0.0.1:5061")
)

// readFlow feeds the two directions record by record in turn, as a
// capture interleaves them, and returns what each decrypted.
func readFlow(keys *Keys, lim Limits, client, server []byte) (fs *Flows, out [2][]byte, res [2]Result) {
	fs = NewFlows(keys, lim)
	h := [2]*Half{fs.Open(testClient, testServer), fs.Open(testServer, testClient)}
	in := [2][]byte{client, server}
	for progress := true; progress; {
		progress = false
		for i := range h {
			// one record at a time: the server's hello must come
			// before the client's protected records are read
			_, n, err := ParseRecord(in[i])
			if err != nil {
				n = len(in[i])
			}
			if n == 0 {
				continue
			}
			m, r := h[i].Read(in[i][:n])
			res[i] = r
			in[i] = in[i][m:]
			out[i] = append(out[i], h[i].Pending()...)
			h[i].Consume(len(h[i].Pending()))
			progress = progress || m > 0
		}
	}
	return fs, out, res
}

func TestReferenceFlow(t *testing.T) {
	client, server, keyLog := referenceTLS(t)
	keys := NewKeys(0)
	if err := keys.Add(keyLog); err != nil {
		t.Fatal(err)
	}
	fs, out, res := readFlow(keys, Limits{}, client, server)
	if res != [2]Result{Reading, Reading} {
		t.Fatalf("results %v, want both reading", res)
	}
	// 13 SIP messages: 7 requests from the client, 6 responses back.
	if n := bytes.Count(out[0], []byte(" SIP/2.0\r\n")); n != 7 {
		t.Errorf("client sent %d requests, want 7", n)
	}
	if n := bytes.Count(out[1], []byte("SIP/2.0 ")); n != 6 {
		t.Errorf("server sent %d responses, want 6", n)
	}
	if st := fs.Stats(); st.Flows != 1 || st.Decrypted != 1 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestReferenceFlowTrafficSecretsOnly: a key log with the application
// secrets alone still reads the SIP: the handshake records fail and the
// first record that opens under the application keys starts that epoch.
func TestReferenceFlowTrafficSecretsOnly(t *testing.T) {
	client, server, keyLog := referenceTLS(t)
	var only []byte
	for _, line := range bytes.Split(keyLog, []byte("\n")) {
		if bytes.Contains(line, []byte("TRAFFIC_SECRET_0")) {
			only = append(append(only, line...), '\n')
		}
	}
	keys := NewKeys(0)
	if err := keys.Add(only); err != nil {
		t.Fatal(err)
	}
	_, out, _ := readFlow(keys, Limits{}, client, server)
	if n := bytes.Count(out[0], []byte(" SIP/2.0\r\n")) + bytes.Count(out[1], []byte("SIP/2.0 ")); n != 13 {
		t.Errorf("%d SIP messages, want 13", n)
	}
}

func TestReferenceFlowWithoutKeys(t *testing.T) {
	client, server, _ := referenceTLS(t)
	fs, out, res := readFlow(NewKeys(0), Limits{}, client, server)
	if res != [2]Result{NoKeys, NoKeys} || len(out[0])+len(out[1]) != 0 {
		t.Fatalf("results %v, %d bytes out; want no keys and nothing", res, len(out[0])+len(out[1]))
	}
	if st := fs.Stats(); st.NoKeys != 1 || st.Decrypted != 0 {
		t.Errorf("stats %+v: the flow counts once as without keys", st)
	}
}

// TestBounds: the buffer cap stops a direction whose decrypted bytes
// are not consumed, and the flow cap evicts the least recently used
// connection; both are counted.
func TestBounds(t *testing.T) {
	client, server, keyLog := referenceTLS(t)
	keys := NewKeys(0)
	if err := keys.Add(keyLog); err != nil {
		t.Fatal(err)
	}
	fs := NewFlows(keys, Limits{MaxBuffer: 100})
	c, s := fs.Open(testClient, testServer), fs.Open(testServer, testClient)
	// Whole directions at once: the client's first protected records
	// come before the server hello is read, so only the server reads.
	c.Read(client[:bytes.Index(client, []byte{typeApplicationData, 3, 3})])
	if _, r := s.Read(server); r != Stopped || fs.Stats().Overflow != 1 {
		t.Errorf("result %v, stats %+v: want the server stopped at the buffer cap", r, fs.Stats())
	}
	fs = NewFlows(keys, Limits{MaxFlows: 1})
	old := fs.Open(testClient, testServer)
	fs.Open(netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:5061"))
	if _, r := old.Read(client); r != Stopped || fs.Stats().Evicted != 1 {
		t.Errorf("result %v, stats %+v: want the first flow evicted", r, fs.Stats())
	}
}

func TestParseRecordRefuses(t *testing.T) {
	for _, b := range [][]byte{
		{19, 3, 3, 0, 1, 0},
		{23, 2, 0, 0, 1, 0},
		{23, 3, 3, 0xff, 0xff},
	} {
		if _, _, err := ParseRecord(b); err == nil {
			t.Errorf("% x: no error", b)
		}
	}
	if _, n, err := ParseRecord([]byte{23, 3, 3, 0, 4, 1}); n != 0 || err != nil {
		t.Errorf("a partial record: n %d err %v", n, err)
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte{22, 3, 1, 0, 4, 1, 0, 0, 0})
	f.Add([]byte{23, 3, 3, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, n, err := ParseRecord(b)
		if err != nil || n == 0 {
			return
		}
		if n != recordHeader+len(r.Body) || n > len(b) || len(r.Body) > maxRecordBody {
			t.Fatalf("n %d body %d of %d", n, len(r.Body), len(b))
		}
		parseHello(r.Body)
	})
}

func FuzzParseKeyLog(f *testing.F) {
	f.Add([]byte(testKeyLog()))
	f.Add([]byte("CLIENT_RANDOM 00 11\n\n# x\r\nSERVER_TRAFFIC_SECRET_0 " + testRandom + " 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys := NewKeys(4)
		err := keys.Add(b)
		var ke *KeyLogError
		if err != nil && !errors.As(err, &ke) {
			t.Fatalf("error %T: %v", err, err)
		}
		if keys.Stats().Sessions > 4 {
			t.Fatal("past the cap")
		}
	})
}

// FuzzFlow feeds a connection's two directions arbitrary bytes with the
// reference capture's keys loaded: whatever comes, Read consumes, stays
// within its buffer cap and never panics.
func FuzzFlow(f *testing.F) {
	client, server, keyLog := referenceTLS(f)
	f.Add(client, server)
	f.Add(client[:len(client)/2], server[len(server)/3:])
	f.Add([]byte{22, 3, 1, 0, 4, 1, 0, 0, 0}, []byte{20, 3, 3, 0, 1, 1})
	keys := NewKeys(0)
	if err := keys.Add(keyLog); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, c, s []byte) {
		_, out, _ := readFlow(keys, Limits{MaxBuffer: 4096}, c, s)
		if len(out[0]) > len(c) || len(out[1]) > len(s) {
			t.Fatalf("more out than in: %d/%d, %d/%d", len(out[0]), len(c), len(out[1]), len(s))
		}
	})
}
