package sip

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/framestore"
	"fieldtap/services/netdecode"
	"fieldtap/services/recorder"
	"fieldtap/services/recorder/pcapng"
	"fieldtap/services/ring"
	"fieldtap/services/tlsdecrypt"
)

// Export bounds: one file stays small enough to mail and to open on a
// laptop; an export that would pass them is cut and says so.
const (
	MaxExportFrames = 200_000
	MaxExportBytes  = 256 << 20
	exportFileMode  = 0o640
	exportSnapLen   = 262144 // tcpdump's default snap length
	// exportNameTries bounds the attempts at a fresh name: with 64
	// random bits a second collision means something else is wrong.
	exportNameTries = 4
)

// ErrNothingToExport is returned when no frame of the dialogs or their
// media was found in the frame rings or the recorder: no file is written.
var ErrNothingToExport = errors.New("sip: nothing to export: no frame of these dialogs is in the frame rings or the recorder")

// ErrDiskFull is wrapped by an export that ran out of space; nothing of
// it is left behind.
var ErrDiskFull = errors.New("no space left on the disk")

// Recorded is the recorder's read side an export needs: frames of a time
// window, and frames again by where a scan found them.
type Recorded interface {
	Scan(ctx context.Context, q recorder.Query, fn func(*recorder.Frame) error) (recorder.ScanStats, error)
	ReadFrames(ctx context.Context, segment string, offsets []int64, fn func(*recorder.Frame) error) (int, error)
}

// Exporter writes the frames behind SIP dialogs to pcapng files, reading
// the ports' frame rings and, for what the rings no longer hold, the
// recorder. Ports register their frame rings as they start.
type Exporter struct {
	dir   string
	mu    sync.Mutex
	ports map[string]*framestore.Store
	rec   Recorded // nil: the frame rings only
	// dec is the live decoder's options (its VXLAN ports), so an export
	// opens the tunnels the analysis opened.
	dec netdecode.Options
	// tls is the live analyser's key store: an export finds the frames
	// of SIP over TLS as the analysis did (SetTLSKeys).
	tls *tlsdecrypt.Keys
}

// SetTLSKeys makes exports decrypt SIP over TLS with keys, to find the
// frames that carried a dialog's messages. The frames are written as
// captured, encrypted; no key material goes into an export.
func (e *Exporter) SetTLSKeys(keys *tlsdecrypt.Keys) {
	e.mu.Lock()
	e.tls = keys
	e.mu.Unlock()
}

// NewExporter returns an exporter writing into dir, which Prepare (or the
// first export) creates 0700; see openExportDir for what an existing one
// must be. dec is the live analyser's decoder options: the export decodes
// the frames again as they were decoded then.
func NewExporter(dir string, dec netdecode.Options) *Exporter {
	return &Exporter{dir: dir, ports: map[string]*framestore.Store{}, dec: dec}
}

// Prepare creates the export directory (0700, parents 0755) or checks the
// one there: a real directory, not a symlink, owned by this process's
// user and writable by nobody else. The daemon calls it at start-up so a
// planted directory is reported then, not at the first export.
func (e *Exporter) Prepare() error {
	root, err := openExportDir(e.dir)
	if err != nil {
		return err
	}
	return root.Close()
}

// Dir is the export directory.
func (e *Exporter) Dir() string { return e.dir }

// AddPort registers the frame ring of an Ethernet port.
func (e *Exporter) AddPort(name string, s *framestore.Store) {
	e.mu.Lock()
	e.ports[name] = s
	e.mu.Unlock()
}

// UseRecorder makes exports read what the frame rings evicted from rec;
// call it before the first Export.
func (e *Exporter) UseRecorder(rec Recorded) {
	e.mu.Lock()
	e.rec = rec
	e.mu.Unlock()
}

// ExportResult says what a file holds and what could not be put in it.
type ExportResult struct {
	Path     string // empty when nothing was found (and no file written)
	Dialogs  int
	Messages int   // messages of the dialogs whose frames were found
	Frames   int   // in the file: every fragment and segment of each message, and media
	Bytes    int64 // file size
	// FromRecorder of the frames were read from the recorder: the frame
	// rings had evicted them.
	FromRecorder int
	// MessagesEvicted lost their bytes to the SIP store's byte bound;
	// MessagesShed were past the per-dialog cap.
	MessagesEvicted int
	MessagesShed    int
	// MessagesMissing are kept messages whose frames neither the frame
	// rings nor the recorder hold any more (or never held: the recorder
	// off, or a gap).
	MessagesMissing int
	Truncated       bool // MaxExportFrames or MaxExportBytes reached

	// Media: the dialogs' RTP and RTCP flows and the frames found for
	// them by address pair and time window.
	MediaFlows int
	RTPFrames  int
	RTCPFrames int
	// MediaFramesMissing are datagrams the media analyser counted on the
	// flows that neither the rings nor the recorder hold.
	MediaFramesMissing int
	// ScanCut says MaxExportScanFrames (or the recorder's read bound) was
	// reached; frames captured from ScanCutAt on were not examined.
	ScanCut   bool
	ScanCutAt *time.Time
}

// exportFrame is one frame chosen for the file.
type exportFrame struct {
	port    string
	tag     uint64
	time    time.Time
	link    wire.LinkType
	data    []byte
	origLen int
}

// Export writes every frame that carried a kept message of ds (every IP
// fragment and TCP segment of it) and every frame of the media flows
// (rtp.Snapshot.Flows of the same dialogs; nil for none), in capture
// order, one pcapng interface per port and link type. Frames the rings
// evicted are read from the recorder. When nothing is found it writes
// nothing and returns ErrNothingToExport with the result's counts.
func (e *Exporter) Export(ctx context.Context, sn *Snapshot, ds []*Dialog, media []MediaFlow, now time.Time) (ExportResult, error) {
	res := ExportResult{Dialogs: len(ds), MediaFlows: len(media)}
	kept := map[string]int{}
	var ws []window
	for _, d := range ds {
		res.MessagesShed += d.MessagesShed
		for _, seq := range d.Messages() {
			if _, ok := sn.Message(seq); ok {
				kept[d.CallID]++
			} else {
				res.MessagesEvicted++
			}
		}
		ws = append(ws, window{d.Created.Add(-exportLead), d.Updated})
	}
	for _, f := range media {
		ws = append(ws, window{f.First, f.Last})
	}
	e.mu.Lock()
	rec, keys := e.rec, e.tls
	e.mu.Unlock()
	sc := newExportScan(kept, media, e.snapshots(), rec, &res)
	sc.dec, sc.tls = e.dec, keys
	if err := sc.run(ctx, mergeWindows(ws)); err != nil {
		return res, err
	}
	for id, n := range kept {
		res.MessagesMissing += max(0, n-sc.found[id])
		res.Messages += min(n, sc.found[id])
	}
	for i, f := range media {
		res.MediaFramesMissing += int(max(f.Packets, sc.flowFound[i]) - sc.flowFound[i])
	}
	frames, err := sc.fetch(ctx)
	if err != nil {
		return res, err
	}
	if len(frames) == 0 {
		return res, ErrNothingToExport
	}
	path, err := e.write(frames, now, &res)
	if err != nil {
		return res, err
	}
	res.Path = path
	return res, nil
}

// snapshots takes one view of every port's frame ring, so the scan and
// the read of the chosen frames see the same frames.
func (e *Exporter) snapshots() map[string]ring.Snapshot[framestore.Record] {
	e.mu.Lock()
	defer e.mu.Unlock()
	snaps := make(map[string]ring.Snapshot[framestore.Record], len(e.ports))
	for name, s := range e.ports {
		snaps[name] = s.Snapshot()
	}
	return snaps
}

// sortFrames puts frames in capture order: time, then port, then each
// port's arrival order.
func sortFrames(fs []exportFrame) {
	slices.SortFunc(fs, func(a, b exportFrame) int {
		if c := a.time.Compare(b.time); c != 0 {
			return c
		}
		if c := cmp.Compare(a.port, b.port); c != 0 {
			return c
		}
		return cmp.Compare(a.tag, b.tag)
	})
}

// write puts frames in a new file of the export directory. Every failure
// removes what it wrote, and a full disk says so (ErrDiskFull).
func (e *Exporter) write(frames []exportFrame, now time.Time, res *ExportResult) (string, error) {
	root, err := openExportDir(e.dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, name, err := createExport(root, now, "sip", ".pcapng")
	if err != nil {
		return "", fmt.Errorf("export: %w", diskFull(e.dir, err))
	}
	werr := writeFrames(f, frames, res)
	if werr == nil {
		werr = f.Sync() // a delayed ENOSPC shows here, not after the answer
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		root.Remove(name)
		res.Frames, res.Truncated = 0, false
		return "", fmt.Errorf("export %s (nothing was kept): %w", filepath.Join(e.dir, name), diskFull(e.dir, werr))
	}
	if st, err := root.Stat(name); err == nil {
		res.Bytes = st.Size()
	}
	return filepath.Join(e.dir, name), nil
}

// createExport makes a new file whose name is prefix, the capture time
// (to the second), 64 random bits and ext, with O_EXCL: two daemons, or
// a restart, exporting in the same second never write to one file.
func createExport(root *os.Root, now time.Time, prefix, ext string) (*os.File, string, error) {
	var err error
	for range exportNameTries {
		var rnd [8]byte
		_, _ = rand.Read(rnd[:]) // crypto/rand.Read never fails (Go 1.24+)
		name := fmt.Sprintf("%s-%s-%s%s", prefix, now.UTC().Format("20060102T150405Z"), hex.EncodeToString(rnd[:]), ext)
		var f *os.File
		f, err = root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, exportFileMode)
		if err == nil {
			return f, name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("%d fresh names were all taken: %w", exportNameTries, err)
}

// WriteFile writes data to a new file of the export directory named
// prefix-<time>-<random>ext (O_EXCL, mode 0640, synced), the way Export
// writes its pcapng; a failure leaves nothing behind. It returns the path.
func (e *Exporter) WriteFile(now time.Time, prefix, ext string, data []byte) (string, error) {
	root, err := openExportDir(e.dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, name, err := createExport(root, now, prefix, ext)
	if err != nil {
		return "", fmt.Errorf("export: %w", diskFull(e.dir, err))
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		root.Remove(name)
		return "", fmt.Errorf("export %s (nothing was kept): %w", filepath.Join(e.dir, name), diskFull(e.dir, werr))
	}
	return filepath.Join(e.dir, name), nil
}

// ReadExport reads back a file an export wrote (path as Export or
// WriteFile returned it), at most max bytes: ok is false when it is
// larger. The read stays inside the export directory.
func (e *Exporter) ReadExport(path string, max int64) (data []byte, ok bool, err error) {
	if filepath.Dir(path) != filepath.Clean(e.dir) {
		return nil, false, fmt.Errorf("read export %s: not in %s", path, e.dir)
	}
	root, err := openExportDir(e.dir)
	if err != nil {
		return nil, false, err
	}
	defer root.Close()
	f, err := root.Open(filepath.Base(path))
	if err != nil {
		return nil, false, fmt.Errorf("read export: %w", err)
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, false, fmt.Errorf("read export %s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, false, nil
	}
	return data, true, nil
}

// diskFull marks an out-of-space error with ErrDiskFull, naming dir.
func diskFull(dir string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w holding %s: %w", ErrDiskFull, dir, err)
	}
	return err
}

// writeFrames writes frames (at least one, in capture order) as pcapng,
// one interface per port and link type, through one buffered writer: a
// block at a time is built in buf and copied into it.
func writeFrames(f *os.File, frames []exportFrame, res *ExportResult) error {
	w := bufio.NewWriter(f)
	buf := pcapng.AppendSHB(nil, "fieldtap export_capture")
	type ifKey struct {
		port string
		link wire.LinkType
	}
	// The first frame's interface is declared up front, as a reader
	// expects one even when no frame fits.
	ifaces := map[ifKey]uint32{{frames[0].port, frames[0].link}: 0}
	buf = pcapng.AppendIDB(buf, pcapng.Interface{Link: uint16(frames[0].link), SnapLen: exportSnapLen, Name: frames[0].port})
	var written int64
	for _, fr := range frames {
		if res.Frames >= MaxExportFrames || written+int64(len(fr.data)) > MaxExportBytes {
			res.Truncated = true
			break
		}
		k := ifKey{fr.port, fr.link}
		id, ok := ifaces[k]
		if !ok {
			id = uint32(len(ifaces))
			ifaces[k] = id
			buf = pcapng.AppendIDB(buf, pcapng.Interface{Link: uint16(fr.link), SnapLen: exportSnapLen, Name: fr.port})
		}
		buf = pcapng.AppendEPB(buf, pcapng.Packet{Interface: id, Time: fr.time, Data: fr.data, OrigLen: fr.origLen})
		if _, err := w.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
		written += int64(len(fr.data))
		res.Frames++
		if fr.tag&recordedTag != 0 {
			res.FromRecorder++
		}
	}
	if _, err := w.Write(buf); err != nil { // the headers when no frame fit
		return err
	}
	return w.Flush()
}
