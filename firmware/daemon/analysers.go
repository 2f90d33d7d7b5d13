package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
	"fieldtap/firmware/config"
	"fieldtap/mcp"
	"fieldtap/services/canbus"
	"fieldtap/services/dbc"
	"fieldtap/services/framestore"
	"fieldtap/services/isotp"
	"fieldtap/services/j1587"
	"fieldtap/services/j1939"
	"fieldtap/services/netdecode"
	"fieldtap/services/ring"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/services/transmit"
)

// analysers holds the stores that analysers fill, one set per daemon.
type analysers struct {
	frameLimits ring.Limits
	can         *canbus.Store
	j1939       *j1939.Store
	// uds keeps every CAN port's UDS transactions as they happen, beyond
	// the frame ring's span (isotp.Store); fed by feedCAN.
	uds   *isotp.Store
	j1587 *j1587.Store
	sip   *sip.Store
	// spanMu serialises Ethernet ports through one SIP analyser: its
	// fragment and TCP tables are keyed by addresses, not ports.
	spanMu  sync.Mutex
	sipFeed *sip.Analyser
	media   *rtp.Analyser // fed by sipFeed's media hook
	// mediaInterval is the per-interval figures' length (media.interval).
	mediaInterval time.Duration
	// sipExport writes the frames behind SIP messages (export_capture).
	sipExport *sip.Exporter
	dbc       *dbc.Registry // databases dbc_load reads from store.data_dir
	// j1708Load measures each J1708 port's load from its own frames
	// (the J1587 store merges ports). Filled by attach before the
	// ports run, read-only after.
	j1708Load map[string]*transmit.LoadMeter
}

// exportDirName is where export_capture writes when store.export_dir is empty.
const exportDirName = "fieldtap-export"

// mediaOptions turns the validated [media] section into rtp.Options.
func mediaOptions(m config.Media) (rtp.Options, error) {
	iv, err := m.IntervalDuration()
	if err != nil {
		return rtp.Options{}, err
	}
	return rtp.Options{Heuristic: m.HeuristicRTP, Interval: iv}, nil
}

func newAnalysers(frameLimits ring.Limits, exportDir, dataDir string, mediaOpt rtp.Options) (*analysers, error) {
	if exportDir == "" {
		exportDir = filepath.Join(os.TempDir(), exportDirName)
	}
	j1587s, err := j1587.New(ring.Limits{Items: j1587.DefaultMaxMessages, Bytes: j1587.DefaultMaxBytes})
	if err != nil {
		return nil, err
	}
	sipStore := sip.NewStore(sip.Limits{})
	sipFeed := sip.NewAnalyser(sipStore, netdecode.Options{})
	media := rtp.NewAnalyser(mediaOpt) // heuristic RTP off unless media.heuristic_rtp (issue #4)
	mediaInterval := mediaOpt.Interval
	if mediaInterval <= 0 {
		mediaInterval = rtp.DefaultInterval
	}
	sipFeed.SetMediaHook(media)
	uds, err := isotp.New(isotp.Limits{})
	if err != nil {
		return nil, err
	}
	a := &analysers{
		frameLimits:   frameLimits,
		can:           canbus.New(ring.Limits{Items: canbus.DefaultFrames, Bytes: canbus.DefaultBytes}),
		j1939:         j1939.NewStore(),
		uds:           uds,
		j1587:         j1587s,
		sip:           sipStore,
		sipFeed:       sipFeed,
		media:         media,
		mediaInterval: mediaInterval,
		sipExport:     sip.NewExporter(exportDir),
		dbc:           dbc.NewRegistry(dataDir),
		j1708Load:     map[string]*transmit.LoadMeter{},
	}
	// An operator's J1939 DBC extends the SPN catalogue of every J1939
	// view from the moment dbc_load reads it.
	a.dbc.Watch(func(loaded []*dbc.Database) {
		cat, _ := j1939.NewCatalogue(loaded...) // the catalogue keeps its notes
		a.j1939.SetCatalogue(cat)
	})
	return a, nil
}

// attach returns what a port's consumer does with each frame and where its
// frames are kept. Each frame is stored once: by the analyser that owns
// the medium (CAN, J1708) or, for Ethernet, in a raw frame ring.
//
// consume returns an error for a frame it could not read, which the port
// counts; a frame a store refuses (oversize) is counted by the store.
func (a *analysers) attach(name string, kind capture.Kind) (consume func(capture.Frame) error, stored func() ring.Stats, err error) {
	switch kind {
	case capture.KindCAN:
		p, err := a.can.Port(name, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("port %s: %w", name, err)
		}
		return func(f capture.Frame) error { return a.feedCAN(name, p, f) }, p.FrameStats, nil
	case capture.KindJ1708:
		load := transmit.NewLoadMeter(transmit.J1708Bitrate)
		a.j1708Load[name] = load
		return func(f capture.Frame) error {
			load.Add(f.Time, len(f.Data)*transmit.J1708BitsPerByte)
			a.j1587.Add(f.Time, f.Data, f.Link == wire.LinkJ2497)
			return nil
		}, a.j1587.MessageStats, nil
	}
	// Ethernet: raw frames for export, and the SIP analyser. Ports share
	// one analyser because its fragment and TCP tables are keyed by address.
	fs, err := framestore.New(a.frameLimits)
	if err != nil {
		return nil, nil, err
	}
	a.sipExport.AddPort(name, fs)
	return func(f capture.Frame) error {
		// An oversize frame is refused and counted by the store.
		_, _ = fs.Append(framestore.Record{Time: f.Time, Link: f.Link, Data: f.Data, OrigLen: f.OrigLen})
		a.spanMu.Lock()
		a.sipFeed.Feed(f.Time, f.Link, f.Data)
		a.spanMu.Unlock()
		return nil
	}, fs.Stats, nil
}

// deps adds the stores tools read to d.
func (a *analysers) deps(d *mcp.Deps) {
	d.CAN = a.can
	d.J1939 = a.j1939
	d.J1587 = a.j1587
	d.SIP = a.sip
	d.SIPStats = a.sipStats
	d.SIPExport = a.sipExport
	d.DBC = a.dbc
	d.Media, d.MediaInterval = a.media, a.mediaInterval
}

// feedCAN decodes SocketCAN bytes once and hands plain values to the CAN,
// J1939 and UDS stores; services/ never sees a driver type. The UDS store
// sees every frame the port's ring stores, in the same order, so its frame
// numbers are the ring's sequence numbers.
func (a *analysers) feedCAN(name string, p *canbus.Port, f capture.Frame) error {
	id, data, err := wire.DecodeCAN(f.Data)
	if err != nil {
		return err
	}
	p.Add(f.Time, id, data)
	if id&(wire.CANRTR|wire.CANERR) == 0 {
		a.j1939.Feed(name, f.Time, id&wire.CANEFFMask, id&wire.CANEFF != 0, data)
	}
	// A port beyond the store's bound is counted there (port_overflow).
	_ = a.uds.Feed(name, f.Time, id, data)
	return nil
}

// sipStats reads the SPAN analyser's counters for get_capture_report.
func (a *analysers) sipStats() (sip.StreamStats, netdecode.Stats) {
	a.spanMu.Lock()
	defer a.spanMu.Unlock()
	return a.sipFeed.Stats()
}
