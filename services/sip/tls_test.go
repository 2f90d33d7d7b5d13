package sip

import (
	"errors"
	"io"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/tlsdecrypt"
	"fieldtap/tools/refdata"
)

// loadWithSecrets runs a capture through an analyser that decrypts TLS
// with the key log the file itself carries (its Decryption Secrets
// Blocks), as a file port does.
func loadWithSecrets(t testing.TB, path string, keys *tlsdecrypt.Keys) (*Store, *Analyser) {
	t.Helper()
	st := newStore(t, Limits{})
	a := NewAnalyser(st, netdecode.Options{})
	a.SetTLSKeys(keys, tlsdecrypt.Limits{})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := pcapfile.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	rd.OnSecrets(func(typ uint32, data []byte) {
		if typ == pcapfile.SecretsTLSKeyLog {
			if err := keys.Add(data); err != nil {
				t.Errorf("the file's key log: %v", err)
			}
		}
	})
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		a.Feed(rec.Time, rec.Link, rec.Data)
	}
	return st, a
}

// TestTLSKeysReference: tshark 4.0.17 decodes 13 SIP messages on one
// Call-ID from the TLS 1.3 reference capture with the keys it carries
// (PROVENANCE.md); the same call over UDP has the same messages.
func TestTLSKeysReference(t *testing.T) {
	path := filepath.Join(refdata.Dir(t, "sip"), "gen-sipp-hold-resume-tls13-with-keys.pcapng")
	keys := tlsdecrypt.NewKeys(0)
	st, a := loadWithSecrets(t, path, keys)
	snap := st.Snapshot()
	if len(snap.Dialogs) != 1 {
		t.Errorf("dialogs = %d, want 1 Call-ID", len(snap.Dialogs))
	}
	wantReq := map[string]uint64{"ACK": 3, "BYE": 1, "INVITE": 3}
	wantResp := map[string]uint64{"100 INVITE": 1, "180 INVITE": 1, "200 BYE": 1, "200 INVITE": 3}
	if !maps.Equal(snap.Stats.Requests, wantReq) || !maps.Equal(snap.Stats.Responses, wantResp) {
		t.Errorf("requests %v responses %v, want %v %v", snap.Stats.Requests, snap.Stats.Responses, wantReq, wantResp)
	}
	if snap.Stats.Transports[TransportTLS] != 13 {
		t.Errorf("transports = %v, want 13 tls", snap.Stats.Transports)
	}
	ss, _ := a.Stats()
	if ss.TLSOnSIPS != 0 || ss.TLSDecrypted != 2 {
		t.Errorf("TLS streams unread on 5061 = %d, decrypted = %d; want 0 and both directions", ss.TLSOnSIPS, ss.TLSDecrypted)
	}
	if f := ss.TLSFlows; f.Flows != 1 || f.Decrypted != 1 || f.NoKeys+f.Failed+f.Lost+f.BadRecords != 0 {
		t.Errorf("TLS flows = %+v, want one decrypted", f)
	}
	t.Logf("TLS: %+v; key store %+v", ss.TLSFlows, keys.Stats())
}

// TestTLSWithoutKeysIsCounted: the same capture with an empty key store
// reads no SIP and counts both directions as TLS on the SIPS port unread.
func TestTLSWithoutKeysIsCounted(t *testing.T) {
	path := filepath.Join(refdata.Dir(t, "sip"), "gen-sipp-hold-resume-tls13-with-keys.pcapng")
	st := newStore(t, Limits{})
	a := NewAnalyser(st, netdecode.Options{})
	a.SetTLSKeys(tlsdecrypt.NewKeys(0), tlsdecrypt.Limits{})
	refdata.EachRecord(t, path, func(rec pcapfile.Record) { a.Feed(rec.Time, rec.Link, rec.Data) })
	ss, _ := a.Stats()
	if n := len(st.Snapshot().Dialogs); n != 0 {
		t.Errorf("dialogs = %d without keys", n)
	}
	if ss.TLSOnSIPS != 2 || ss.TLSFlows.NoKeys != 1 {
		t.Errorf("unread on 5061 = %d, flows without keys = %d; want 2 and 1", ss.TLSOnSIPS, ss.TLSFlows.NoKeys)
	}
}

// FuzzAnalyserTLS feeds a connection's two directions arbitrary bytes
// through an analyser that decrypts TLS: whatever comes, it consumes
// without panicking and every TLS direction is read or counted.
func FuzzAnalyserTLS(f *testing.F) {
	hello := []byte{0x16, 0x03, 0x01, 0x00, 0x2a, 0x01, 0x00, 0x00, 0x26, 0x03, 0x03}
	hello = append(hello, make([]byte, 33)...)
	f.Add(hello, []byte{0x16, 0x03, 0x03, 0x00, 0x05, 0x02, 0x00, 0x00, 0x01, 0x00})
	f.Add([]byte(invite), []byte{0x17, 0x03, 0x03, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, c, s []byte) {
		a := NewAnalyser(newStore(t, Limits{Dialogs: 4, MessagesPerDialog: 4}), netdecode.Options{})
		keys := tlsdecrypt.NewKeys(4)
		_ = keys.Add([]byte("CLIENT_RANDOM " + strings.Repeat("00", 32) + " " + strings.Repeat("11", 48) + "\n"))
		a.SetTLSKeys(keys, tlsdecrypt.Limits{MaxFlows: 2, MaxBuffer: 4096})
		cs := &netdecode.Stream{Src: netip.MustParseAddrPort("10.0.0.1:40000"), Dst: netip.MustParseAddrPort("10.0.0.2:5061")}
		ss := &netdecode.Stream{Src: cs.Dst, Dst: cs.Src}
		in := [2][]byte{c, s}
		st := [2]*netdecode.Stream{cs, ss}
		for progress := true; progress; {
			progress = false
			for i := range st {
				if len(in[i]) == 0 {
					continue
				}
				n := a.TCP(st[i], timeZero, in[i])
				if n > 0 {
					in[i], progress = in[i][n:], true
				}
			}
		}
		if stats, _ := a.Stats(); stats.DecodePanics != 0 {
			t.Fatal("panic")
		}
	})
}
