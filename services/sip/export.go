package sip

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
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
	exportDirMode   = 0o750
	exportSnapLen   = 262144 // tcpdump's default snap length
)

// Exporter writes the frames behind SIP messages to pcapng files. Ports
// register their frame rings as they start.
type Exporter struct {
	dir   string
	mu    sync.Mutex
	ports map[string]*framestore.Store
	n     int // files written, for unique names
}

// NewExporter returns an exporter writing into dir (created on first use).
func NewExporter(dir string) *Exporter {
	return &Exporter{dir: dir, ports: map[string]*framestore.Store{}}
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

func (e *Exporter) write(frames []exportFrame, now time.Time, res *ExportResult) (path string, err error) {
	if err := os.MkdirAll(e.dir, exportDirMode); err != nil {
		return "", fmt.Errorf("export directory %s: %w", e.dir, err)
	}
	e.mu.Lock()
	e.n++
	name := fmt.Sprintf("sip-%s-%d.pcapng", now.UTC().Format("20060102T150405Z"), e.n)
	e.mu.Unlock()
	path = filepath.Join(e.dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, exportFileMode)
	if err != nil {
		return "", fmt.Errorf("export: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return
		}
		if st, serr := os.Stat(path); serr == nil {
			res.Bytes = st.Size()
		}
	}()
	link := layers.LinkTypeEthernet
	if len(frames) > 0 {
		link = frames[0].rec.Link
	}
	first := pcapgo.NgInterface{Name: portName(frames), LinkType: link, SnapLength: exportSnapLen}
	w, err := pcapgo.NewNgWriterInterface(f, first, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "fieldtap export_capture"}})
	if err != nil {
		return "", err
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
				return "", err
			}
			ifaces[k] = id
		}
		ci := gopacket.CaptureInfo{Timestamp: fr.rec.Time, CaptureLength: len(fr.rec.Data), Length: max(fr.rec.OrigLen, len(fr.rec.Data)), InterfaceIndex: id}
		if err := w.WritePacket(ci, fr.rec.Data); err != nil {
			return "", err
		}
		written += int64(len(fr.rec.Data))
		res.Frames++
	}
	// NgWriter buffers internally.
	if err := w.Flush(); err != nil {
		return "", err
	}
	return path, nil
}

func portName(frames []exportFrame) string {
	if len(frames) == 0 {
		return "none"
	}
	return frames[0].port
}
