package pcapfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// dsbBlock is a little-endian Decryption Secrets Block of typ carrying
// data, announcing n secret bytes.
func dsbBlock(typ uint32, data []byte, n uint32) []byte {
	padded := (len(data) + 3) &^ 3
	total := uint32(12 + 8 + padded)
	b := binary.LittleEndian.AppendUint32(nil, blockDSB)
	b = binary.LittleEndian.AppendUint32(b, total)
	b = binary.LittleEndian.AppendUint32(b, typ)
	b = binary.LittleEndian.AppendUint32(b, n)
	b = append(b, data...)
	b = append(b, make([]byte, padded-len(data))...)
	return binary.LittleEndian.AppendUint32(b, total)
}

// readSecrets reads a whole capture, collecting its secrets blocks and
// how many packets came before each.
func readSecrets(t *testing.T, r io.Reader) (secrets [][]byte, before []int, err error) {
	t.Helper()
	rd, err := NewReader(r)
	if err != nil {
		return nil, nil, err
	}
	packets := 0
	rd.OnSecrets(func(typ uint32, data []byte) {
		if typ == SecretsTLSKeyLog {
			secrets = append(secrets, bytes.Clone(data))
			before = append(before, packets)
		}
	})
	for {
		if _, err := rd.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return secrets, before, nil
			}
			return secrets, before, err
		}
		packets++
	}
}

func TestSecretsBlockOverrun(t *testing.T) {
	b := append(pcapngBytes(t, 1), dsbBlock(SecretsTLSKeyLog, []byte("CLIENT_RANDOM"), 64)...)
	_, _, err := readSecrets(t, bytes.NewReader(b))
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "secrets length 64 overruns") {
		t.Fatalf("err = %v, want a FormatError naming the overrun", err)
	}
}

func TestSecretsSkippedWithoutCallback(t *testing.T) {
	b := append(pcapngBytes(t, 1), dsbBlock(SecretsTLSKeyLog, []byte("x"), 64)...)
	recs, err := readAll(t, b)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %d, err %v: a reader not asked for secrets skips their blocks", len(recs), err)
	}
}

func FuzzReaderSecrets(f *testing.F) {
	f.Add(append(pcapngBytes(f, 1), dsbBlock(SecretsTLSKeyLog, []byte("CLIENT_RANDOM 00 11\n"), 20)...))
	f.Add(append(pcapngBytes(f, 0), dsbBlock(0x57474b4c, []byte("wg"), 2)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := NewReader(bytes.NewReader(b))
		if err != nil {
			return
		}
		rd.OnSecrets(func(typ uint32, data []byte) {
			if len(data) > len(b) {
				t.Fatalf("secrets of %d bytes from %d", len(data), len(b))
			}
		})
		for range 10000 {
			if _, err := rd.Next(); err != nil {
				return
			}
		}
	})
}
