package pcapfile_test

// An external test package: tools/refdata, which finds the shared
// reference data, imports pcapfile.

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/pcapfile"
	"fieldtap/tools/refdata"
)

// TestReferenceCaptures reads every capture in the shared reference data to
// its end without a format error.
func TestReferenceCaptures(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	files, _ := filepath.Glob(filepath.Join(dir, "*.pcap*"))
	if len(files) == 0 {
		t.Skipf("reference captures not found in %s (shared testdata is not part of the repository)", dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			n := 0
			refdata.EachRecord(t, f, func(pcapfile.Record) { n++ })
			if n == 0 {
				t.Error("no records")
			}
		})
	}
}

// TestSecretsOfReferenceCapture: editcap --inject-secrets put the TLS 1.3
// reference capture's key log in one block ahead of the packets
// (../shared/testdata/sip/PROVENANCE.md); the reader hands it on before
// the first packet.
func TestSecretsOfReferenceCapture(t *testing.T) {
	f, err := os.Open(refdata.File(t, "sip", "gen-sipp-hold-resume-tls13-with-keys.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := pcapfile.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var secrets [][]byte
	var before []int
	packets := 0
	rd.OnSecrets(func(typ uint32, data []byte) {
		if typ == pcapfile.SecretsTLSKeyLog {
			secrets = append(secrets, bytes.Clone(data))
			before = append(before, packets)
		}
	})
	for {
		if _, err := rd.Next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		packets++
	}
	if len(secrets) != 1 || before[0] != 0 {
		t.Fatalf("%d secrets blocks, the first after %v packets; want one before any", len(secrets), before)
	}
	for _, label := range []string{"CLIENT_HANDSHAKE_TRAFFIC_SECRET ", "SERVER_TRAFFIC_SECRET_0 "} {
		if !strings.Contains(string(secrets[0]), label) {
			t.Errorf("the key log has no %s line", label)
		}
	}
}
