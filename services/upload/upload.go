// Package upload keeps the files an agent sends the box in pieces: a
// bounded table of uploads in progress, each a hidden partial file in the
// directory it will land in, resumable at the offset the box states,
// checked against its declared size and SHA-256 and by the area's content
// check before it is renamed into place. Partial files are dot-files, so
// listings and the file sandbox never show them.
package upload

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Bounds of the table.
const (
	// MaxChunk is the most one chunk may carry, decoded: a chunk is one
	// JSON-RPC call, and a quarter MiB keeps it (as base64) well inside a
	// request a small box buffers.
	MaxChunk = 256 << 10
	// MaxInProgress is how many uploads may be open at once; each holds a
	// partial file and a hash state.
	MaxInProgress = 16
	// DefaultExpiry is how long an upload no chunk touched is kept.
	DefaultExpiry = 24 * time.Hour
	// maxName bounds a file name, as most file systems do.
	maxName = 255
)

// partPrefix and partSuffix name a partial file: hidden (a dot-file) in
// the directory the finished file lands in, so the rename stays on one
// file system.
const (
	partPrefix = ".upload-"
	partSuffix = ".part"
)

// ErrRefused marks a refusal caused by the request (a bad name, a quota,
// a wrong offset, a digest or content that does not match): the caller
// can fix it. Other errors are the box's (a disk that fails).
var ErrRefused = errors.New("upload refused")

// Cause is what a refusal is about, so that a transport can answer each
// in its own terms (the HTTP PUT route, a status code each).
type Cause int

const (
	// CauseRequest: a bad area, name, size, digest or chunk.
	CauseRequest Cause = iota
	// CauseQuota: over files.max_file_bytes or files.max_total_bytes.
	CauseQuota
	// CauseOffset: a chunk not at the offset the upload stands at, or a
	// finish before every byte arrived.
	CauseOffset
	// CauseDigest: the bytes received do not have the declared SHA-256.
	CauseDigest
	// CauseContent: the area's check refused what the file holds.
	CauseContent
	// CauseConflict: the name exists, another upload of it is open, or
	// another call for the upload is running.
	CauseConflict
	// CauseGone: no such upload in progress.
	CauseGone
	// CauseFull: MaxInProgress uploads are open.
	CauseFull
)

// Refusal is a refusal of one Cause; errors.Is(err, ErrRefused) holds.
type Refusal struct {
	Cause Cause
	msg   string
}

func (r *Refusal) Error() string { return ErrRefused.Error() + ": " + r.msg }

// Is makes every Refusal an ErrRefused.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }

// CauseOf is the Cause of a refusal; ok is false for any other error.
func CauseOf(err error) (c Cause, ok bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Cause, true
	}
	return 0, false
}

func refuse(c Cause, format string, args ...any) error {
	return &Refusal{Cause: c, msg: fmt.Sprintf(format, args...)}
}

// Area is a directory uploads land in and the check its files must pass.
type Area struct {
	Name string
	Dir  string
	// Check reads the finished file at path (named name in the area) and
	// returns the kind it holds, or an error naming what it saw instead.
	Check func(name, path string) (kind string, err error)
}

// Limits are the quotas: MaxFileBytes for one file, MaxTotalBytes for
// the files stored in every area plus the declared sizes of the uploads
// in progress.
type Limits struct {
	MaxFileBytes  int64
	MaxTotalBytes int64
	Expiry        time.Duration // 0: DefaultExpiry
}

// Table is the uploads in progress. It is safe for concurrent use.
type Table struct {
	areas map[string]Area
	order []string
	lim   Limits
	now   func() time.Time

	mu  sync.Mutex // guards ups and every upload's state
	ups map[string]*upload
}

type upload struct {
	id, area, name, digest string
	size                   int64
	part                   string // the partial file's path

	next    int64
	sum     hash.Hash
	touched time.Time
	// busy is set while a chunk is written or the upload is checked, done
	// outside the lock: a second call for it meanwhile is refused.
	busy bool
}

// New returns an empty table over areas and removes every partial file
// their directories hold: the table of a previous run is gone, so its
// partials can never finish.
func New(areas []Area, lim Limits) (*Table, error) {
	if lim.MaxFileBytes <= 0 || lim.MaxTotalBytes < lim.MaxFileBytes {
		return nil, fmt.Errorf("upload limits: max_file_bytes %d must be positive and at most max_total_bytes %d", lim.MaxFileBytes, lim.MaxTotalBytes)
	}
	if lim.Expiry <= 0 {
		lim.Expiry = DefaultExpiry
	}
	t := &Table{areas: map[string]Area{}, lim: lim, now: time.Now, ups: map[string]*upload{}}
	for _, a := range areas {
		t.areas[a.Name] = a
		t.order = append(t.order, a.Name)
		parts, _ := filepath.Glob(filepath.Join(a.Dir, partPrefix+"*"+partSuffix))
		for _, p := range parts {
			if err := os.Remove(p); err != nil {
				return nil, fmt.Errorf("stale partial upload %s: %w", p, err)
			}
		}
	}
	return t, nil
}

// Areas names the areas uploads may land in.
func (t *Table) Areas() []string { return t.order }

// Begun is where an upload stands.
type Begun struct {
	ID      string
	Next    int64 // the offset the next chunk must start at
	Size    int64
	Resumed bool // an upload of the same area, name, size and digest was open
}

// Begin opens an upload of size bytes with the SHA-256 digest (hex) to
// land as name in area, or resumes the open one of the same area, name,
// size and digest.
func (t *Table) Begin(area, name string, size int64, digest string) (Begun, error) {
	a, ok := t.areas[area]
	if !ok {
		return Begun{}, refuse(CauseRequest, "area %q: uploads go to %s", area, strings.Join(t.order, " or "))
	}
	if err := checkName(name); err != nil {
		return Begun{}, err
	}
	digest = strings.ToLower(digest)
	if b, err := hex.DecodeString(digest); err != nil || len(b) != sha256.Size {
		return Begun{}, refuse(CauseRequest, "sha256 %q: want 64 hex digits", digest)
	}
	if size <= 0 {
		return Begun{}, refuse(CauseRequest, "size %d: want at least 1 byte", size)
	}
	if size > t.lim.MaxFileBytes {
		return Begun{}, refuse(CauseQuota, "size %d bytes is over the files.max_file_bytes quota of %d", size, t.lim.MaxFileBytes)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked()
	for _, u := range t.ups {
		if u.area != area || u.name != name {
			continue
		}
		if u.size == size && u.digest == digest {
			u.touched = t.now()
			return Begun{ID: u.id, Next: u.next, Size: u.size, Resumed: true}, nil
		}
		return Begun{}, refuse(CauseConflict, "%s/%s: an upload of it with another size or digest is in progress (upload %s); finish it or wait for it to expire after %v", area, name, u.id, t.lim.Expiry)
	}
	if _, err := os.Lstat(filepath.Join(a.Dir, name)); err == nil {
		return Begun{}, refuse(CauseConflict, "%s/%s exists; uploads never replace a file, choose another name", area, name)
	}
	if len(t.ups) >= MaxInProgress {
		return Begun{}, refuse(CauseFull, "%d uploads are in progress, the most the box keeps; finish one or wait for one to expire after %v", MaxInProgress, t.lim.Expiry)
	}
	used, err := t.usedLocked()
	if err != nil {
		return Begun{}, err
	}
	if used+size > t.lim.MaxTotalBytes {
		return Begun{}, refuse(CauseQuota, "size %d bytes with %d stored or in progress is over the files.max_total_bytes quota of %d", size, used, t.lim.MaxTotalBytes)
	}
	id, err := newID()
	if err != nil {
		return Begun{}, err
	}
	if err := os.MkdirAll(a.Dir, 0o750); err != nil {
		return Begun{}, fmt.Errorf("%s: %w", area, err)
	}
	u := &upload{id: id, area: area, name: name, digest: digest, size: size, part: filepath.Join(a.Dir, partPrefix+id+partSuffix), sum: sha256.New(), touched: t.now()}
	f, err := os.OpenFile(u.part, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Begun{}, fmt.Errorf("%s: partial file: %w", area, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(u.part)
		return Begun{}, err
	}
	t.ups[id] = u
	return Begun{ID: id, Next: 0, Size: size}, nil
}

// checkName takes a plain file name: no directory, nothing the sandbox
// hides (a dot-file, a .tmp name), nothing a shell or a listing would
// misread.
func checkName(name string) error {
	switch {
	case name == "" || len(name) > maxName:
		return refuse(CauseRequest, "name %q: want 1 to %d bytes", name, maxName)
	case strings.ContainsAny(name, "/\\"):
		return refuse(CauseRequest, "name %q: a plain file name, no directory", name)
	case strings.HasPrefix(name, "."):
		return refuse(CauseRequest, "name %q: a name starting with a dot is hidden", name)
	case strings.HasSuffix(name, ".tmp"):
		return refuse(CauseRequest, "name %q: a .tmp name is hidden", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			return refuse(CauseRequest, "name %q: control or invalid characters", name)
		}
	}
	return nil
}

func newID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// usedLocked is the quota's count: every regular file stored in the areas
// (partials excluded) plus the declared sizes of the uploads in progress.
func (t *Table) usedLocked() (int64, error) {
	var used int64
	for _, name := range t.order {
		err := filepath.WalkDir(t.areas[name].Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), partPrefix) {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				return nil // removed while walking
			}
			used += fi.Size()
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("%s: counting stored bytes: %w", name, err)
		}
	}
	for _, u := range t.ups {
		used += u.size
	}
	return used, nil
}

// expireLocked drops the uploads no chunk touched for the expiry.
func (t *Table) expireLocked() {
	for id, u := range t.ups {
		if !u.busy && t.now().Sub(u.touched) >= t.lim.Expiry {
			t.dropLocked(id, u)
		}
	}
}

// dropLocked forgets u and removes its partial.
func (t *Table) dropLocked(id string, u *upload) {
	delete(t.ups, id)
	os.Remove(u.part)
}

// takeLocked returns the open upload id, marked busy.
func (t *Table) takeLocked(id string) (*upload, error) {
	t.expireLocked()
	u, ok := t.ups[id]
	switch {
	case !ok:
		return nil, refuse(CauseGone, "upload %q: no such upload in progress (finished, dropped, expired after %v, or the box restarted): begin it again", id, t.lim.Expiry)
	case u.busy:
		return nil, refuse(CauseConflict, "upload %q: another call for it is running; retry when it answers", id)
	}
	u.busy = true
	return u, nil
}

// Chunk writes data at off, which must be where the upload stands, and
// returns the next offset.
func (t *Table) Chunk(id string, off int64, data []byte) (int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u, err := t.takeLocked(id)
	if err != nil {
		return 0, err
	}
	defer func() { u.busy = false }()
	switch {
	case off != u.next:
		return u.next, refuse(CauseOffset, "offset %d: the upload stands at %d; send the chunk starting there", off, u.next)
	case len(data) == 0:
		return u.next, refuse(CauseRequest, "empty chunk at offset %d", off)
	case len(data) > MaxChunk:
		return u.next, refuse(CauseRequest, "chunk of %d bytes: at most %d", len(data), MaxChunk)
	case off+int64(len(data)) > u.size:
		return u.next, refuse(CauseRequest, "chunk of %d bytes at offset %d runs past the declared size %d", len(data), off, u.size)
	}
	t.mu.Unlock()
	werr := writeAt(u.part, data, off)
	t.mu.Lock()
	if werr != nil {
		return u.next, fmt.Errorf("partial file: %w", werr) // the next chunk rewrites the same offset
	}
	u.sum.Write(data)
	u.next += int64(len(data))
	u.touched = t.now()
	return u.next, nil
}

func writeAt(path string, data []byte, off int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, off)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Status is where upload id stands, for a caller that lost the answer
// of its last chunk.
func (t *Table) Status(id string) (Begun, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u, err := t.takeLocked(id)
	if err != nil {
		return Begun{}, err
	}
	u.busy = false
	return Begun{ID: u.id, Next: u.next, Size: u.size, Resumed: true}, nil
}

// Find is the upload of name in area in progress, if any: a caller that
// knows the file, not the id (the HTTP PUT route, which names the file).
func (t *Table) Find(area, name string) (Begun, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked()
	for _, u := range t.ups {
		if u.area == area && u.name == name {
			return Begun{ID: u.id, Next: u.next, Size: u.size, Resumed: true}, true
		}
	}
	return Begun{}, false
}

// Stored is the regular file name holds in area, if any: what an
// upload landed as (or anything else under that name, which no upload
// may replace).
func (t *Table) Stored(area, name string) (fs.FileInfo, bool) {
	a, ok := t.areas[area]
	if !ok || checkName(name) != nil {
		return nil, false
	}
	fi, err := os.Lstat(filepath.Join(a.Dir, name))
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	return fi, true
}

// Done is a finished upload.
type Done struct {
	Area, Name, Kind, SHA256 string
	Bytes                    int64
}

// Finish checks the upload's size, digest and content and renames it
// into place. A digest or content that does not match drops the upload
// (its bytes are wrong; a resume would keep them); a size short of the
// declared one keeps it open.
func (t *Table) Finish(id string) (Done, error) {
	t.mu.Lock()
	u, err := t.takeLocked(id)
	t.mu.Unlock()
	if err != nil {
		return Done{}, err
	}
	d, keep, err := t.finish(u)
	t.mu.Lock()
	defer t.mu.Unlock()
	u.busy = false
	if !keep {
		t.dropLocked(id, u)
	}
	return d, err
}

// finish does Finish's work outside the lock; keep says the upload stays
// open (its partial is still right).
func (t *Table) finish(u *upload) (d Done, keep bool, err error) {
	if u.next != u.size {
		return Done{}, true, refuse(CauseOffset, "upload %s holds %d of its %d bytes; send the rest from offset %d", u.id, u.next, u.size, u.next)
	}
	if got := hex.EncodeToString(u.sum.Sum(nil)); got != u.digest {
		return Done{}, false, refuse(CauseDigest, "%s/%s: the %d bytes received have SHA-256 %s, not the declared %s; the upload is dropped, begin it again", u.area, u.name, u.size, got, u.digest)
	}
	a := t.areas[u.area]
	kind, err := a.Check(u.name, u.part)
	if err != nil {
		return Done{}, false, refuse(CauseContent, "%s/%s: not kept: %v", u.area, u.name, err)
	}
	if err := syncFile(u.part); err != nil {
		return Done{}, true, err
	}
	// A link fails when the name exists, where a rename would replace it.
	final := filepath.Join(a.Dir, u.name)
	if err := os.Link(u.part, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Done{}, false, refuse(CauseConflict, "%s/%s appeared while uploading; uploads never replace a file, begin again under another name", u.area, u.name)
		}
		return Done{}, true, fmt.Errorf("%s/%s: %w", u.area, u.name, err)
	}
	return Done{Area: u.area, Name: u.name, Kind: kind, SHA256: u.digest, Bytes: u.size}, false, nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// InProgress is how many uploads are open.
func (t *Table) InProgress() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ups)
}
