package trunk

import (
	"testing"
	"time"
)

// FuzzTLSRecords: any bytes from either side, split anywhere, parse
// without panicking, consume no more than offered, and keep the
// handshake buffer within its bound.
func FuzzTLSRecords(f *testing.F) {
	// A ClientHello naming sip.example.test, a ServerHello choosing
	// TLS_AES_128_GCM_SHA256 with TLS 1.3, a clear fatal
	// handshake_failure alert, a ChangeCipherSpec and an encrypted record.
	f.Add(clientHelloSeed, true, 7)
	f.Add(serverHelloSeed, false, 3)
	f.Add([]byte{21, 3, 3, 0, 2, 2, 40, 20, 3, 3, 0, 1, 1, 23, 3, 3, 0, 3, 1, 2, 3}, false, 0)
	f.Add([]byte{22, 3, 3, 0, 8, 11, 0, 0, 4, 0, 0, 1, 0}, false, 5) // a truncated certificate list
	f.Fuzz(func(t *testing.T, b []byte, fromServer bool, split int) {
		var s TLSState
		at := time.Unix(0, 0)
		if split < 0 || split > len(b) {
			split = len(b) / 2
		}
		n := s.feed(fromServer, 0, at, b[:split])
		if n < 0 || n > split {
			t.Fatalf("consumed %d of %d", n, split)
		}
		rest := b[n:]
		if m := s.feed(!fromServer, 0, at, rest); m < 0 || m > len(rest) {
			t.Fatalf("consumed %d of %d", m, len(rest))
		}
		if len(s.client.hs) > maxHandshake || len(s.server.hs) > maxHandshake || len(s.Alerts) > maxAlerts {
			t.Fatalf("bounds: handshake buffers %d and %d, alerts %d", len(s.client.hs), len(s.server.hs), len(s.Alerts))
		}
	})
}

// clientHelloSeed is a TLS 1.2 record holding a ClientHello with an SNI.
var clientHelloSeed = record(22, handshake(1, join(
	[]byte{3, 3}, make([]byte, 32), []byte{0}, // version, random, session id
	[]byte{0, 2, 0x13, 0x01}, []byte{1, 0}, // cipher suites, compression
	vec16(join([]byte{0, 0}, vec16(vec16(join([]byte{0}, vec16([]byte("sip.example.test"))))))))))

// serverHelloSeed is a ServerHello with supported_versions TLS 1.3.
var serverHelloSeed = record(22, handshake(2, join(
	[]byte{3, 3}, make([]byte, 32), []byte{0}, []byte{0x13, 0x01}, []byte{0},
	vec16(join([]byte{0, 43}, vec16([]byte{3, 4}))))))

func join(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func vec16(b []byte) []byte { return append([]byte{byte(len(b) >> 8), byte(len(b))}, b...) }

func handshake(typ byte, body []byte) []byte {
	return append([]byte{typ, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}

func record(typ byte, body []byte) []byte {
	return append([]byte{typ, 3, 3, byte(len(body) >> 8), byte(len(body))}, body...)
}

// TestSeedsParse: the seeds say what they are meant to.
func TestSeedsParse(t *testing.T) {
	var s TLSState
	at := time.Unix(0, 0)
	if n := s.feed(false, 0, at, clientHelloSeed); n != len(clientHelloSeed) || s.SNI != "sip.example.test" {
		t.Fatalf("ClientHello: consumed %d of %d, SNI %q, problem %q", n, len(clientHelloSeed), s.SNI, s.Problem)
	}
	if s.feed(true, 0, at, serverHelloSeed); !s.ServerHello || s.Version != 0x0304 || s.Cipher != 0x1301 {
		t.Fatalf("ServerHello: %+v", s)
	}
}
