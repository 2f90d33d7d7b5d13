package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// maxManifestBytes bounds a manifest read back: gaps and files are few.
const maxManifestBytes = 1 << 20

var idRE = regexp.MustCompile(`^ev-\d{8}T\d{6}Z-[0-9a-f]{8}$`)

// Info is one bundle in a listing: read from its manifest, not verified
// (Verify and Open hash every file).
type Info struct {
	ID      string
	Created time.Time
	Reason  string
	From    time.Time
	To      time.Time
	Bytes   int64
	Files   []FileDigest
	Gaps    int // recording gaps inside the window
	Cut     bool
}

// usage counts the sealed bundles and their bytes; the caller holds mu.
func (b *Builder) usage() (n int, bytes int64, err error) {
	ents, err := os.ReadDir(b.opt.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	for _, e := range ents {
		if !idRE.MatchString(e.Name()) {
			continue
		}
		n++
		files, _ := os.ReadDir(filepath.Join(b.opt.Dir, e.Name()))
		for _, f := range files {
			if fi, err := f.Info(); err == nil {
				bytes += fi.Size()
			}
		}
	}
	return n, bytes, nil
}

// List returns the sealed bundles, oldest first.
func (b *Builder) List() ([]Info, error) {
	ents, err := os.ReadDir(b.opt.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return []Info{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []Info{}
	for _, e := range ents {
		if !idRE.MatchString(e.Name()) || len(out) == MaxBundles {
			continue
		}
		m, _, err := b.manifest(e.Name())
		if err != nil {
			out = append(out, Info{ID: e.Name(), Reason: "unreadable manifest: " + err.Error()})
			continue
		}
		in := Info{ID: m.ID, Created: m.Created, Reason: m.Reason, From: m.From, To: m.To, Files: m.Files, Gaps: len(m.Gaps), Cut: m.Cut}
		for _, f := range m.Files {
			in.Bytes += f.Bytes
		}
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (b *Builder) manifest(id string) (Manifest, []byte, error) {
	path := filepath.Join(b.opt.Dir, id, fileManifest)
	st, err := os.Stat(path)
	if err != nil {
		return Manifest{}, nil, err
	}
	if st.Size() > maxManifestBytes {
		return Manifest{}, nil, fmt.Errorf("manifest of %d bytes", st.Size())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, nil, err
	}
	return m, raw, nil
}

// Verify checks a bundle against its manifest and seal: every listed
// file present with its size and SHA-256, no other file, the manifest
// matching manifest.sha256. A mismatch wraps ErrTampered and says what.
func (b *Builder) Verify(id string) (Manifest, error) {
	if !idRE.MatchString(id) {
		return Manifest{}, fmt.Errorf("evidence: %q is not a bundle id", id)
	}
	m, raw, err := b.manifest(id)
	if err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: manifest: %v", ErrTampered, id, err)
	}
	dir := filepath.Join(b.opt.Dir, id)
	seal, err := os.ReadFile(filepath.Join(dir, fileSeal))
	if err != nil {
		return Manifest{}, fmt.Errorf("%w: %s: seal: %v", ErrTampered, id, err)
	}
	if got := sha(raw); !bytes.HasPrefix(seal, []byte(got+"  ")) {
		return Manifest{}, fmt.Errorf("%w: %s: manifest.json does not match manifest.sha256", ErrTampered, id)
	}
	if m.ID != id {
		return Manifest{}, fmt.Errorf("%w: %s: manifest names bundle %q", ErrTampered, id, m.ID)
	}
	want := map[string]FileDigest{}
	for _, f := range m.Files {
		want[f.Name] = f
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Manifest{}, err
	}
	for _, e := range ents {
		name := e.Name()
		if name == fileManifest || name == fileSeal {
			continue
		}
		w, ok := want[name]
		if !ok {
			return Manifest{}, fmt.Errorf("%w: %s: %s is not in the manifest", ErrTampered, id, name)
		}
		if !e.Type().IsRegular() {
			return Manifest{}, fmt.Errorf("%w: %s: %s is not a regular file", ErrTampered, id, name)
		}
		got, err := digest(filepath.Join(dir, name))
		if err != nil {
			return Manifest{}, err
		}
		if got.Bytes != w.Bytes || got.SHA256 != w.SHA256 {
			return Manifest{}, fmt.Errorf("%w: %s: %s has %d bytes and SHA-256 %s, the manifest %d and %s", ErrTampered, id, name, got.Bytes, got.SHA256, w.Bytes, w.SHA256)
		}
		delete(want, name)
	}
	for name := range want {
		return Manifest{}, fmt.Errorf("%w: %s: %s is missing", ErrTampered, id, name)
	}
	return m, nil
}

// Open verifies bundle id and opens one of its files for reading;
// a bundle that does not verify is refused.
func (b *Builder) Open(id, name string) (*os.File, error) {
	m, err := b.Verify(id)
	if err != nil {
		return nil, err
	}
	if name != fileManifest && name != fileSeal && !slices.ContainsFunc(m.Files, func(f FileDigest) bool { return f.Name == name }) {
		return nil, fmt.Errorf("evidence: bundle %s has no file %q", id, name)
	}
	return os.Open(filepath.Join(b.opt.Dir, id, name))
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
