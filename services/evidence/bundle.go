package evidence

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"fieldtap/services/recorder"
	"fieldtap/services/recorder/pcapng"
)

// Bounds (docs/recorder.md).
const (
	// DefaultMaxBytes caps every bundle together; a new bundle past it is
	// refused: evidence is never deleted by the box.
	DefaultMaxBytes = 256 << 20
	// MaxBundleBytes caps one bundle's capture: frames past it are left
	// out and the manifest says so.
	MaxBundleBytes = 64 << 20
	// MaxBundles bounds the directory listing.
	MaxBundles = 256
	// MaxWindow bounds Before and After: past ten minutes a bundle
	// outgrows what anyone will read.
	MaxWindow = 10 * time.Minute
	// maxTriggerBytes bounds the triggering answer stored verbatim (an MCP
	// answer is at most 1 MiB by default).
	maxTriggerBytes = 1 << 20
	// maxReason bounds the box's note on why the bundle exists.
	maxReason = 64
	// settle is how long after a window's end the builder waits before
	// reading it: frames reach the disk within recorder.FlushInterval of
	// arriving, and a driver may stamp a frame a little before it hands
	// it over.
	settle  = time.Second
	snapLen = 262144
)

// File names inside a bundle.
const (
	fileCapture    = "capture.pcapng"
	fileTrigger    = "trigger.json"
	fileDisclaimer = "DISCLAIMER.txt"
	fileManifest   = "manifest.json"
	fileSeal       = "manifest.sha256"
	dirPending     = "pending"
	dirMode        = 0o750
	sealedDirMode  = 0o550
	sealedFileMode = 0o440
)

// Disclaimer is DISCLAIMER.txt: what the bundle is and is not.
const Disclaimer = `This evidence bundle was written by a fieldtap capture box.

capture.pcapng holds the frames the box recorded on the listed ports in the
listed window, as its drivers received them: a mirror port, a bus
transceiver or a serial line can drop, reorder or alter traffic before the
box sees it, and the box's clock is only as good as its time source. Gaps
in the recording (a power cut, a full disk, a restart) are listed in
manifest.json and are not filled. trigger.json is the answer that caused
the bundle, as the caller gave it; it may quote text written by the
senders of the captured traffic and is not the box's own statement.

manifest.json lists the SHA-256 of every other file; manifest.sha256 is
the SHA-256 of manifest.json. The digests show the files are the ones the
box wrote; they do not prove who wrote them, and anyone who can write the
files can also rewrite the digests.
`

// Errors.
var (
	// ErrTampered is returned for a bundle whose files no longer match its
	// manifest: it is refused, never served.
	ErrTampered = errors.New("evidence: bundle does not match its manifest")
	// ErrFull is returned when a bundle would pass MaxBytes.
	ErrFull = errors.New("evidence: the evidence directory is full")
	// ErrNotYet is returned by Build for a window not yet recorded.
	ErrNotYet = errors.New("evidence: the window is not recorded yet")
)

// Source is the recorder's side the builder needs.
type Source interface {
	Scan(ctx context.Context, q recorder.Query, fn func(*recorder.Frame) error) (recorder.ScanStats, error)
	Pin(from, to time.Time, reason string) (recorder.Pin, error)
	Unpin(id string) error
	Gaps() []recorder.Gap
}

// Options configure a Builder. Dir is required.
type Options struct {
	Dir      string
	MaxBytes int64  // 0: DefaultMaxBytes
	Version  string // fieldtapd's version, written into each manifest
	// Now is the clock deciding when a window is recorded; nil is time.Now.
	Now func() time.Time
	// Fence cleans and marks the sender text a trigger's trigger.json
	// quotes (a caller's user part): the daemon gives untrusted.Text's
	// fence, so the file fences exactly as an answer does. Without it
	// that text is left out, never written bare.
	Fence func(string) string
}

// Request asks for a bundle of the frames in [At-Before, At+After).
type Request struct {
	Reason string        // the box's word: request, call_failed, dm1, sip_filter
	At     time.Time     // the trigger's moment
	Before time.Duration // kept before At, at most MaxWindow
	After  time.Duration // kept after At, at most MaxWindow
	Ports  []string      // empty: every recorded port
	// Trigger is the triggering answer, stored verbatim as trigger.json;
	// it must be JSON.
	Trigger json.RawMessage
}

func (q Request) window() (time.Time, time.Time) { return q.At.Add(-q.Before), q.At.Add(q.After) }

func (q Request) check() error {
	switch {
	case q.At.IsZero():
		return errors.New("evidence: request without a moment")
	case q.Before < 0 || q.After < 0 || q.Before > MaxWindow || q.After > MaxWindow || q.Before+q.After == 0:
		return fmt.Errorf("evidence: before %v and after %v: want 0 to %v each, not both 0", q.Before, q.After, MaxWindow)
	case len(q.Trigger) > maxTriggerBytes:
		return fmt.Errorf("evidence: trigger of %d bytes: at most %d", len(q.Trigger), maxTriggerBytes)
	case !json.Valid(q.Trigger):
		return errors.New("evidence: trigger is not JSON")
	case q.Reason == "" || len(q.Reason) > maxReason:
		return fmt.Errorf("evidence: reason %q: want 1 to %d bytes", q.Reason, maxReason)
	}
	return nil
}

// FileDigest is one file of a bundle.
type FileDigest struct {
	Name   string `json:"name"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Manifest is manifest.json: what the bundle holds and its digests.
type Manifest struct {
	ID       string            `json:"id"`
	Created  time.Time         `json:"created"`
	Reason   string            `json:"reason"`
	At       time.Time         `json:"at"`
	From     time.Time         `json:"from"`
	To       time.Time         `json:"to"`
	Ports    []string          `json:"ports"` // asked for; empty means every port
	Frames   map[string]uint64 `json:"frames"`
	Gaps     []recorder.Gap    `json:"gaps"` // recording gaps overlapping the window
	Cut      bool              `json:"cut"`  // MaxBundleBytes or the recorder's read bound left frames out
	Files    []FileDigest      `json:"files"`
	Fieldtap string            `json:"fieldtap"`
}

// Builder builds, seals, verifies and lists bundles.
type Builder struct {
	opt Options
	src Source
	mu  sync.Mutex // one build at a time: MaxBytes is checked against what exists
}

// New returns a builder writing into o.Dir, created on first use.
func New(o Options, src Source) (*Builder, error) {
	if o.Dir == "" {
		return nil, errors.New("evidence: no directory")
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxBytes < 0 {
		return nil, fmt.Errorf("evidence: max bytes %d", o.MaxBytes)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Builder{opt: o, src: src}, nil
}

// Dir is the evidence directory.
func (b *Builder) Dir() string { return b.opt.Dir }

func newID(now time.Time) string {
	var r [4]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (Go 1.24)
	return "ev-" + now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(r[:])
}

// Build seals a bundle of a window that is already recorded; a window
// ending less than a second ago, or later, is ErrNotYet: use Trigger.
func (b *Builder) Build(ctx context.Context, q Request) (Manifest, error) {
	if err := q.check(); err != nil {
		return Manifest{}, err
	}
	if _, to := q.window(); b.opt.Now().Before(to.Add(settle)) {
		return Manifest{}, fmt.Errorf("%w: it ends at %v", ErrNotYet, to)
	}
	return b.build(ctx, newID(b.opt.Now()), q)
}

func (b *Builder) build(ctx context.Context, id string, q Request) (Manifest, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n, used, err := b.usage(); err != nil {
		return Manifest{}, err
	} else if n >= MaxBundles || used >= b.opt.MaxBytes {
		return Manifest{}, fmt.Errorf("%w: %d bundles, %d of %d bytes", ErrFull, n, used, b.opt.MaxBytes)
	}
	from, to := q.window()
	m := Manifest{ID: id, Created: b.opt.Now().UTC(), Reason: q.Reason, At: q.At.UTC(), From: from.UTC(), To: to.UTC(),
		Ports: slices.Clone(q.Ports), Frames: map[string]uint64{}, Gaps: []recorder.Gap{}, Fieldtap: b.opt.Version}
	if m.Ports == nil {
		m.Ports = []string{}
	}
	for _, g := range b.src.Gaps() {
		if g.From.Before(to) && (g.To == nil || !g.To.Before(from)) {
			m.Gaps = append(m.Gaps, g)
		}
	}
	tmp := filepath.Join(b.opt.Dir, "."+id+".tmp")
	if err := os.MkdirAll(tmp, dirMode); err != nil {
		return Manifest{}, fmt.Errorf("evidence: %w", err)
	}
	fail := func(err error) (Manifest, error) {
		os.RemoveAll(tmp)
		return Manifest{}, err
	}
	if err := b.writeCapture(ctx, filepath.Join(tmp, fileCapture), q, &m); err != nil {
		return fail(err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{fileTrigger, q.Trigger}, {fileDisclaimer, []byte(Disclaimer)}} {
		if err := writeFile(filepath.Join(tmp, f.name), f.data); err != nil {
			return fail(err)
		}
	}
	for _, name := range []string{fileCapture, fileTrigger, fileDisclaimer} {
		d, err := digest(filepath.Join(tmp, name))
		if err != nil {
			return fail(err)
		}
		m.Files = append(m.Files, d)
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fail(err)
	}
	if err := writeFile(filepath.Join(tmp, fileManifest), mb); err != nil {
		return fail(err)
	}
	sum := sha256.Sum256(mb)
	if err := writeFile(filepath.Join(tmp, fileSeal), []byte(hex.EncodeToString(sum[:])+"  "+fileManifest+"\n")); err != nil {
		return fail(err)
	}
	var size int64
	for _, f := range m.Files {
		size += f.Bytes
	}
	if _, used, err := b.usage(); err == nil && used+size > b.opt.MaxBytes {
		return fail(fmt.Errorf("%w: this bundle's %d bytes would pass %d (%d used)", ErrFull, size, b.opt.MaxBytes, used))
	}
	if err := os.Chmod(tmp, sealedDirMode); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, filepath.Join(b.opt.Dir, id)); err != nil {
		os.Chmod(tmp, dirMode)
		return fail(err)
	}
	if err := syncDir(b.opt.Dir); err != nil {
		return m, err
	}
	return m, nil
}

// writeCapture writes the window's frames as one pcapng section, an
// interface per port and link type as they first appear.
func (b *Builder) writeCapture(ctx context.Context, path string, q Request, m *Manifest) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, sealedFileMode|0o200)
	if err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	var buf []byte
	buf = pcapng.AppendSHB(buf, "fieldtap evidence "+b.opt.Version)
	type ifKey struct {
		port string
		link uint16
	}
	ifaces := map[ifKey]uint32{}
	var written int64
	from, to := q.window()
	st, err := b.src.Scan(ctx, recorder.Query{From: from, To: to, Ports: q.Ports}, func(fr *recorder.Frame) error {
		k := ifKey{fr.Port, fr.Link}
		id, ok := ifaces[k]
		if !ok {
			id = uint32(len(ifaces))
			ifaces[k] = id
			buf = pcapng.AppendIDB(buf, pcapng.Interface{Link: fr.Link, Name: fr.Port, SnapLen: snapLen})
		}
		p := pcapng.Packet{Interface: id, Time: fr.Time, Data: fr.Data, OrigLen: fr.OrigLen}
		if written+int64(len(buf)+pcapng.EPBSize(p)) > MaxBundleBytes {
			m.Cut = true
			return recorder.ErrStop
		}
		buf = pcapng.AppendEPB(buf, p)
		m.Frames[fr.Port]++
		if len(buf) >= 1<<16 {
			n, err := w.Write(buf)
			written += int64(n)
			buf = buf[:0]
			return err
		}
		return nil
	})
	if err == nil {
		_, err = w.Write(buf)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("evidence: write %s: %w", fileCapture, err)
	}
	m.Cut = m.Cut || st.Cut
	return os.Chmod(path, sealedFileMode)
}

func writeFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, sealedFileMode|0o200)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(path, sealedFileMode)
	}
	return err
}

func digest(path string) (FileDigest, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileDigest{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return FileDigest{}, err
	}
	return FileDigest{Name: filepath.Base(path), Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
