package sip

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"fieldtap/services/framestore"
	"fieldtap/services/ring"
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

// ErrDiskFull is wrapped by an export that ran out of space; nothing of
// it is left behind.
var ErrDiskFull = errors.New("no space left on the disk")

// Exporter writes the frames behind SIP messages to pcapng files. Ports
// register their frame rings as they start.
type Exporter struct {
	dir   string
	mu    sync.Mutex
	ports map[string]*framestore.Store
}

// NewExporter returns an exporter writing into dir, which Prepare (or the
// first export) creates 0700; see openExportDir for what an existing one
// must be.
func NewExporter(dir string) *Exporter {
	return &Exporter{dir: dir, ports: map[string]*framestore.Store{}}
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

// ExportResult says what a file holds and what could not be put in it.
type ExportResult struct {
	Path     string `json:"path"`
	Dialogs  int    `json:"dialogs"`
	Messages int    `json:"messages"` // messages whose frame was written
	Frames   int    `json:"frames"`
	Bytes    int64  `json:"bytes"` // file size
	// MessagesEvicted lost their bytes (and so their frame reference) to
	// the SIP store's byte bound; MessagesShed were past the per-dialog cap.
	MessagesEvicted int `json:"messages_evicted"`
	MessagesShed    int `json:"messages_shed"`
	// FramesEvicted were referenced but already gone from the port's
	// frame ring (store.frames_per_port, store.bytes_per_port).
	FramesEvicted int `json:"frames_evicted"`
	// NoFrame messages came without a frame reference.
	NoFrame   int  `json:"no_frame"`
	Truncated bool `json:"truncated"` // MaxExportFrames or MaxExportBytes reached

	// Media (export_media.go): the dialogs' RTP and RTCP flows and the
	// frames found for them by address pair and time window.
	MediaFlows int `json:"media_flows"`
	RTPFrames  int `json:"rtp_frames"`
	RTCPFrames int `json:"rtcp_frames"`
	// MediaFramesMissing are datagrams the media analyser counted on the
	// flows whose frames the rings no longer hold (evicted, refused as
	// oversize, or fragments of which only the last is matched).
	MediaFramesMissing int `json:"media_frames_missing"`
	// MediaScanCut says MaxMediaScanFrames was reached;
	// MediaFramesUnscanned frames inside the flows' windows were not
	// examined.
	MediaScanCut         bool `json:"media_scan_cut"`
	MediaFramesUnscanned int  `json:"media_frames_unscanned"`
}

type exportFrame struct {
	port string
	seq  uint64
	rec  framestore.Record
}

// Export writes every frame that completed a kept message of ds, and
// every frame carrying one of the media flows (rtp.Snapshot.Flows of the
// same dialogs; nil for none), in capture order, one pcapng interface per
// port and link type.
func (e *Exporter) Export(sn *Snapshot, ds []*Dialog, media []MediaFlow, now time.Time) (ExportResult, error) {
	res := ExportResult{Dialogs: len(ds)}
	refs := map[FrameRef]bool{}
	for _, d := range ds {
		res.MessagesShed += d.MessagesShed
		for _, seq := range d.Messages() {
			m, ok := sn.Message(seq)
			switch {
			case !ok:
				res.MessagesEvicted++
			case !m.Frame.Set:
				res.NoFrame++
			default:
				refs[m.Frame] = true
				res.Messages++
			}
		}
	}
	snaps := e.snapshots()
	scanMedia(snaps, media, refs, &res)
	frames := collect(snaps, refs, &res)
	path, err := e.write(frames, now, &res)
	if err != nil {
		return res, err
	}
	res.Path = path
	return res, nil
}

// snapshots takes one view of every port's frame ring, so the media scan
// and the read of the referenced frames see the same frames.
func (e *Exporter) snapshots() map[string]ring.Snapshot[framestore.Record] {
	e.mu.Lock()
	defer e.mu.Unlock()
	snaps := make(map[string]ring.Snapshot[framestore.Record], len(e.ports))
	for name, s := range e.ports {
		snaps[name] = s.Snapshot()
	}
	return snaps
}

// collect reads the referenced frames from the ports' ring views, in
// capture order: time, then port, then each port's arrival order.
func collect(snaps map[string]ring.Snapshot[framestore.Record], refs map[FrameRef]bool, res *ExportResult) []exportFrame {
	var out []exportFrame
	for ref := range refs {
		snap, ok := snaps[ref.Port]
		if !ok {
			res.FramesEvicted++
			continue
		}
		r, ok := snap.Get(ref.Seq)
		if !ok {
			res.FramesEvicted++
			continue
		}
		out = append(out, exportFrame{port: ref.Port, seq: ref.Seq, rec: r})
	}
	slices.SortFunc(out, func(a, b exportFrame) int {
		if c := a.rec.Time.Compare(b.rec.Time); c != 0 {
			return c
		}
		if c := cmp.Compare(a.port, b.port); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	return out
}

// write puts frames in a new file of the export directory. Every failure
// removes what it wrote, and a full disk says so (ErrDiskFull).
func (e *Exporter) write(frames []exportFrame, now time.Time, res *ExportResult) (string, error) {
	root, err := openExportDir(e.dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, name, err := createExport(root, now)
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

// createExport makes a new file whose name is the capture time (to the
// second) and 64 random bits, with O_EXCL: two daemons, or a restart,
// exporting in the same second never write to one file.
func createExport(root *os.Root, now time.Time) (*os.File, string, error) {
	var err error
	for range exportNameTries {
		var rnd [8]byte
		_, _ = rand.Read(rnd[:]) // crypto/rand.Read never fails (Go 1.24+)
		name := fmt.Sprintf("sip-%s-%s.pcapng", now.UTC().Format("20060102T150405Z"), hex.EncodeToString(rnd[:]))
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

// diskFull marks an out-of-space error with ErrDiskFull, naming dir.
func diskFull(dir string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w holding %s: %w", ErrDiskFull, dir, err)
	}
	return err
}

func writeFrames(f *os.File, frames []exportFrame, res *ExportResult) error {
	link := layers.LinkTypeEthernet
	if len(frames) > 0 {
		link = frames[0].rec.Link
	}
	first := pcapgo.NgInterface{Name: portName(frames), LinkType: link, SnapLength: exportSnapLen}
	w, err := pcapgo.NewNgWriterInterface(f, first, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "fieldtap export_capture"}})
	if err != nil {
		return err
	}
	type ifKey struct {
		port string
		link layers.LinkType
	}
	ifaces := map[ifKey]int{}
	if len(frames) > 0 {
		ifaces[ifKey{frames[0].port, link}] = 0
	}
	var written int64
	for _, fr := range frames {
		if res.Frames >= MaxExportFrames || written+int64(len(fr.rec.Data)) > MaxExportBytes {
			res.Truncated = true
			break
		}
		k := ifKey{fr.port, fr.rec.Link}
		id, ok := ifaces[k]
		if !ok {
			if id, err = w.AddInterface(pcapgo.NgInterface{Name: fr.port, LinkType: fr.rec.Link, SnapLength: exportSnapLen}); err != nil {
				return err
			}
			ifaces[k] = id
		}
		ci := gopacket.CaptureInfo{Timestamp: fr.rec.Time, CaptureLength: len(fr.rec.Data), Length: max(fr.rec.OrigLen, len(fr.rec.Data)), InterfaceIndex: id}
		if err := w.WritePacket(ci, fr.rec.Data); err != nil {
			return err
		}
		written += int64(len(fr.rec.Data))
		res.Frames++
	}
	// NgWriter buffers internally.
	return w.Flush()
}

func portName(frames []exportFrame) string {
	if len(frames) == 0 {
		return "none"
	}
	return frames[0].port
}
