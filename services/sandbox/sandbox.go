package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Bounds: a listing is read whole by an agent; one read is a
// resources/read answer (8 MiB, base64 in a JSON string).
const (
	MaxEntries = 1000
	MaxRead    = 8 << 20
	// maxDepth is how deep a listing walks: ROOT/ID/FILE (a bundle).
	maxDepth = 2
)

// ErrRefused wraps every name the sandbox will not serve.
var ErrRefused = errors.New("sandbox: refused")

// Root is one directory served under Name.
type Root struct {
	Name string // the first component of every name under it: exports, evidence, captures
	Dir  string
	// Verify, when set, is called with the path relative to Dir before a
	// file is opened; an error refuses it (an evidence bundle whose
	// digests no longer match).
	Verify func(rel string) error
}

// Entry is one file.
type Entry struct {
	Name     string // ROOT/REL, as Open takes it
	Bytes    int64
	Modified time.Time
}

// Sandbox serves its roots.
type Sandbox struct {
	roots []Root
}

// New returns a sandbox over roots; names must be distinct single path
// components, directories absolute.
func New(roots ...Root) (*Sandbox, error) {
	seen := map[string]bool{}
	for _, r := range roots {
		switch {
		case r.Name == "" || strings.ContainsAny(r.Name, `/\`) || r.Name == "." || r.Name == "..":
			return nil, fmt.Errorf("sandbox: root name %q", r.Name)
		case seen[r.Name]:
			return nil, fmt.Errorf("sandbox: root %q twice", r.Name)
		case !filepath.IsAbs(r.Dir):
			return nil, fmt.Errorf("sandbox: root %s: %q is not absolute", r.Name, r.Dir)
		}
		seen[r.Name] = true
	}
	return &Sandbox{roots: slices.Clone(roots)}, nil
}

// Roots names the roots, in order.
func (s *Sandbox) Roots() []string {
	out := make([]string, len(s.roots))
	for i, r := range s.roots {
		out[i] = r.Name
	}
	return out
}

func refuse(name, why string) error { return fmt.Errorf("%w: %q: %s", ErrRefused, name, why) }

// split finds name's root and checks its relative part.
func (s *Sandbox) split(name string) (Root, string, error) {
	rootName, rel, _ := strings.Cut(name, "/")
	i := slices.IndexFunc(s.roots, func(r Root) bool { return r.Name == rootName })
	if i < 0 {
		return Root{}, "", refuse(name, fmt.Sprintf("not under a root (%s)", strings.Join(s.Roots(), ", ")))
	}
	if rel == "" || !filepath.IsLocal(rel) || path.Clean(rel) != rel || strings.Contains(rel, `\`) {
		return Root{}, "", refuse(name, "want ROOT/NAME with a plain relative name")
	}
	for _, c := range strings.Split(rel, "/") {
		if strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".tmp") {
			return Root{}, "", refuse(name, "hidden or temporary files are not served")
		}
	}
	return s.roots[i], rel, nil
}

// resolve opens r's directory as an os.Root and checks that no
// component of rel is a symbolic link and that rel is a regular file.
func resolve(r Root, name, rel string) (*os.Root, fs.FileInfo, error) {
	root, err := os.OpenRoot(r.Dir)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: root %s: %w", r.Name, err)
	}
	parts := strings.Split(rel, "/")
	var fi fs.FileInfo
	for i := range parts {
		fi, err = root.Lstat(strings.Join(parts[:i+1], "/"))
		if err != nil {
			root.Close()
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil, fmt.Errorf("sandbox: %q: %w", name, fs.ErrNotExist)
			}
			return nil, nil, refuse(name, err.Error())
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			root.Close()
			return nil, nil, refuse(name, "a symbolic link")
		}
	}
	if !fi.Mode().IsRegular() {
		root.Close()
		return nil, nil, refuse(name, "not a regular file")
	}
	return root, fi, nil
}

// Stat describes one file.
func (s *Sandbox) Stat(name string) (Entry, error) {
	r, rel, err := s.split(name)
	if err != nil {
		return Entry{}, err
	}
	root, fi, err := resolve(r, name, rel)
	if err != nil {
		return Entry{}, err
	}
	root.Close()
	return Entry{Name: name, Bytes: fi.Size(), Modified: fi.ModTime().UTC()}, nil
}

// Path returns the file's path under its root's resolved directory, for
// a reader that opens by path (open_capture's drivers): the root's own
// symlinks resolved, none allowed below it.
func (s *Sandbox) Path(name string) (string, error) {
	r, rel, err := s.split(name)
	if err != nil {
		return "", err
	}
	root, _, err := resolve(r, name, rel)
	if err != nil {
		return "", err
	}
	root.Close()
	dir, err := filepath.EvalSymlinks(r.Dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}

// File is an open file: read it with ReadChunk (a bounded read) or as an
// io.ReadSeeker (an HTTP GET's ServeContent). Close it.
type File struct {
	*os.File
	Entry
}

// Open checks, verifies and opens one file for reading.
func (s *Sandbox) Open(name string) (*File, error) {
	r, rel, err := s.split(name)
	if err != nil {
		return nil, err
	}
	root, fi, err := resolve(r, name, rel)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if r.Verify != nil {
		if err := r.Verify(rel); err != nil {
			return nil, refuse(name, err.Error())
		}
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, refuse(name, err.Error())
	}
	return &File{File: f, Entry: Entry{Name: name, Bytes: fi.Size(), Modified: fi.ModTime().UTC()}}, nil
}

// ReadChunk reads up to n bytes at off (n at most MaxRead); a short
// chunk at the end of the file is not an error.
func (f *File) ReadChunk(off int64, n int) ([]byte, error) {
	if n < 1 || n > MaxRead || off < 0 {
		return nil, fmt.Errorf("sandbox: read of %d bytes at %d: want 1 to %d bytes at a non-negative offset", n, off, MaxRead)
	}
	b := make([]byte, min(int64(n), max(f.Bytes-off, 0)))
	k, err := f.ReadAt(b, off)
	if err == io.EOF {
		err = nil
	}
	return b[:k], err
}

// List returns the files under a root, at most MaxEntries, by name;
// truncated says more exist.
func (s *Sandbox) List(rootName string) (entries []Entry, truncated bool, err error) {
	i := slices.IndexFunc(s.roots, func(r Root) bool { return r.Name == rootName })
	if i < 0 {
		return nil, false, refuse(rootName, fmt.Sprintf("not a root (%s)", strings.Join(s.Roots(), ", ")))
	}
	root, err := os.OpenRoot(s.roots[i].Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []Entry{}, false, nil // nothing written yet
	}
	if err != nil {
		return nil, false, err
	}
	defer root.Close()
	entries = []Entry{}
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		hidden := strings.HasPrefix(d.Name(), ".") || strings.HasSuffix(d.Name(), ".tmp")
		depth := strings.Count(p, "/") // 0 for ROOT/NAME
		switch {
		case d.IsDir() && (hidden || depth >= maxDepth-1):
			return fs.SkipDir
		case d.IsDir() || hidden || !d.Type().IsRegular():
			return nil // symbolic links and devices are not listed
		}
		if len(entries) == MaxEntries {
			truncated = true
			return fs.SkipAll
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		entries = append(entries, Entry{Name: rootName + "/" + p, Bytes: fi.Size(), Modified: fi.ModTime().UTC()})
		return nil
	})
	return entries, truncated, err
}
