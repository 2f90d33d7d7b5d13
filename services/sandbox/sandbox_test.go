package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func setup(t *testing.T) (*Sandbox, string) {
	t.Helper()
	base := t.TempDir()
	exports := filepath.Join(base, "exports")
	evidence := filepath.Join(base, "evidence")
	outside := filepath.Join(base, "secret")
	for _, d := range []string{exports, filepath.Join(evidence, "ev-1"), filepath.Join(evidence, ".ev-2.tmp"), filepath.Join(evidence, "ev-1", "deep")} {
		os.MkdirAll(d, 0o755)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(outside, "the box's secrets")
	write(filepath.Join(exports, "sip-1.pcapng"), "pcapng bytes")
	write(filepath.Join(exports, ".hidden"), "x")
	write(filepath.Join(evidence, "ev-1", "capture.pcapng"), "evidence bytes")
	write(filepath.Join(evidence, "ev-1", "deep", "too-deep"), "x")
	write(filepath.Join(evidence, ".ev-2.tmp", "capture.pcapng"), "half written")
	os.Symlink(outside, filepath.Join(exports, "link.pcapng"))
	os.Symlink(base, filepath.Join(exports, "dirlink"))
	s, err := New(Root{Name: "exports", Dir: exports}, Root{Name: "evidence", Dir: evidence, Verify: func(rel string) error {
		if strings.HasPrefix(rel, "ev-1/") {
			return nil
		}
		return errors.New("does not verify")
	}})
	if err != nil {
		t.Fatal(err)
	}
	return s, base
}

func TestOpenServesOnlyWhatIsInside(t *testing.T) {
	s, base := setup(t)
	cases := []struct {
		name    string
		want    string // the file's content, or "" when refused
		refused bool
	}{
		{name: "exports/sip-1.pcapng", want: "pcapng bytes"},
		{name: "evidence/ev-1/capture.pcapng", want: "evidence bytes"},
		{name: "exports/../secret", refused: true},
		{name: "exports/link.pcapng", refused: true},
		{name: "exports/dirlink/secret", refused: true},
		{name: "exports/.hidden", refused: true},
		{name: "evidence/.ev-2.tmp/capture.pcapng", refused: true},
		{name: "secret", refused: true},
		{name: "/etc/passwd", refused: true},
		{name: "exports/" + filepath.Join(base, "secret"), refused: true},
		{name: "exports/a//b", refused: true},
		{name: "exports", refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := s.Open(tc.name)
			if tc.refused {
				if !errors.Is(err, ErrRefused) {
					t.Errorf("open: %v, want ErrRefused", err)
				}
				if f != nil {
					f.Close()
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			b, err := f.ReadChunk(0, MaxRead)
			if err != nil || string(b) != tc.want || f.Bytes != int64(len(tc.want)) {
				t.Errorf("read %q (%d bytes) %v, want %q", b, f.Bytes, err, tc.want)
			}
		})
	}
	if _, err := s.Open("exports/missing.pcapng"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
}

func TestVerifyRefusesBeforeOpening(t *testing.T) {
	s, base := setup(t)
	os.MkdirAll(filepath.Join(base, "evidence", "ev-9"), 0o755)
	os.WriteFile(filepath.Join(base, "evidence", "ev-9", "capture.pcapng"), []byte("x"), 0o644)
	if _, err := s.Open("evidence/ev-9/capture.pcapng"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "does not verify") {
		t.Errorf("an unverified bundle file: %v", err)
	}
}

func TestListAndChunks(t *testing.T) {
	s, _ := setup(t)
	ents, trunc, err := s.List("evidence")
	if err != nil || trunc || len(ents) != 1 || ents[0].Name != "evidence/ev-1/capture.pcapng" {
		t.Errorf("evidence listing %+v %v %v", ents, trunc, err)
	}
	ents, _, _ = s.List("exports")
	if len(ents) != 1 || ents[0].Name != "exports/sip-1.pcapng" {
		t.Errorf("exports listing %+v: want the one regular, visible file", ents)
	}
	if _, _, err := s.List("secret"); !errors.Is(err, ErrRefused) {
		t.Errorf("listing a non-root: %v", err)
	}
	f, err := s.Open("exports/sip-1.pcapng")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, err := f.ReadChunk(7, 100); err != nil || string(b) != "bytes" {
		t.Errorf("chunk at 7: %q %v", b, err)
	}
	if _, err := f.ReadChunk(0, MaxRead+1); err == nil {
		t.Error("a read past MaxRead was accepted")
	}
	if p, err := s.Path("exports/sip-1.pcapng"); err != nil || !strings.HasSuffix(p, "/exports/sip-1.pcapng") {
		t.Errorf("path %q %v", p, err)
	}
}
