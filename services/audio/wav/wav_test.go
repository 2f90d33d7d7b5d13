package wav

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// header reads back what Encode wrote, as a player would.
func header(t *testing.T, b []byte) (rate, channels, bits, data int) {
	t.Helper()
	le := binary.LittleEndian
	if len(b) < HeaderBytes || string(b[0:4]) != "RIFF" || string(b[8:12]) != "WAVE" || string(b[12:16]) != "fmt " || string(b[36:40]) != "data" {
		t.Fatalf("not a canonical WAVE header: % x", b[:min(len(b), HeaderBytes)])
	}
	if int(le.Uint32(b[4:])) != len(b)-8 {
		t.Fatalf("RIFF size %d, file %d bytes", le.Uint32(b[4:]), len(b))
	}
	return int(le.Uint32(b[24:])), int(le.Uint16(b[22:])), int(le.Uint16(b[34:])), int(le.Uint32(b[40:]))
}

func TestEncode(t *testing.T) {
	b, err := Encode(8000, 2, []int16{1, -1, 32767, -32768})
	if err != nil {
		t.Fatal(err)
	}
	rate, ch, bits, data := header(t, b)
	if rate != 8000 || ch != 2 || bits != 16 || data != 8 {
		t.Fatalf("rate %d channels %d bits %d data %d", rate, ch, bits, data)
	}
	if got := b[HeaderBytes:]; string(got) != "\x01\x00\xff\xff\xff\x7f\x00\x80" {
		t.Fatalf("samples % x", got)
	}
	for _, bad := range []struct{ rate, ch, n int }{{0, 1, 2}, {8000, 0, 2}, {8000, 2, 3}} {
		if _, err := Encode(bad.rate, bad.ch, make([]int16, bad.n)); err == nil {
			t.Errorf("Encode(%d, %d, %d samples) took it", bad.rate, bad.ch, bad.n)
		}
	}
}

// sox reads what Encode writes and agrees on rate, channels and length.
func TestSoxReadsIt(t *testing.T) {
	soxi, err := exec.LookPath("soxi")
	if err != nil {
		t.Skip("soxi (Debian sox) is not installed")
	}
	b, err := Encode(16000, 1, make([]int16, 16000))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "one-second.wav")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{"-r": "16000", "-c": "1", "-s": "16000", "-b": "16"} {
		out, err := exec.Command(soxi, arg, p).Output()
		if err != nil {
			t.Fatalf("soxi %s: %v", arg, err)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("soxi %s = %s, want %s", arg, got, want)
		}
	}
}

func FuzzEncode(f *testing.F) {
	f.Add(8000, 1, []byte{1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, rate, channels int, raw []byte) {
		s := make([]int16, len(raw)/2)
		for i := range s {
			s[i] = int16(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		b, err := Encode(rate, channels, s)
		if err != nil {
			return
		}
		r, ch, _, data := header(t, b)
		if r != rate || ch != channels || data != 2*len(s) || len(b) != HeaderBytes+data {
			t.Fatalf("rate %d/%d channels %d/%d data %d for %d samples", r, rate, ch, channels, data, len(s))
		}
	})
}
