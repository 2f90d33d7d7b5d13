package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
	"fieldtap/firmware/config"
	"fieldtap/services/budget"
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
	"fieldtap/services/tlsdecrypt"
	"fieldtap/services/transmit"
	"fieldtap/services/trunk"
)

// analysers holds the stores that analysers fill, one set per daemon,
// each bounded by its share of the memory budget.
type analysers struct {
	plan       budget.Plan
	frameItems int // store.frames_per_port; 0 lets the byte share decide
	can        *canbus.Store
	j1939      *j1939.Store
	j1587      *j1587.Store
	sip        *sip.Store
	spanMu     sync.Mutex // serialises Ethernet ports through one SIP analyser: its fragment and TCP tables are keyed by addresses, not ports
	sipFeed    *sip.Analyser
	// tunnels are the tunnel headers each Ethernet port's frames opened:
	// the shared decoder's counts split by port (capture_status).
	tunnels    map[string]*netdecode.TunnelCounts
	tunnelsMu  sync.Mutex
	tlsKeys    *tlsdecrypt.Keys // the sessions sipFeed decrypts SIP over TLS with
	media      *rtp.Analyser    // fed by sipFeed's media hook
	trunk      *trunk.Table     // fed by sipFeed's TCP hook
	frames     map[string]*framestore.Store
	framesMu   sync.Mutex
	handoffs   map[string]*capture.Handoff // for the budget view's hand-off use
	handoffsMu sync.Mutex
	sipExport  *sip.Exporter
	dbc        *dbc.Registry // databases dbc_load reads from store.data_dir
	// uds keeps every CAN port's UDS transactions as they happen, beyond
	// the frame ring's span (isotp.Store); fed by feedCAN.
	uds *isotp.Store
	// mediaInterval is the per-interval figures' length (media.interval).
	mediaInterval time.Duration
	// j1708Load measures each J1708 port's load from its own frames, for
	// the transmit gate. Filled by attach before the ports run, read-only
	// after.
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

// newAnalysers builds every store with the bound plan gives it.
func newAnalysers(plan budget.Plan, st config.Store, mediaOpt rtp.Options, dec netdecode.Options, trunkOpt trunk.Options) (*analysers, error) {
	exportDir := st.ExportDir
	if exportDir == "" {
		exportDir = filepath.Join(os.TempDir(), exportDirName)
	}
	// Every CAN or J1708 port has the same weight, so the first port's
	// share is each port's; the store applies it per port.
	perPort := func(store string, each int64) ring.Limits {
		for _, s := range plan.Shares {
			if s.Store == store {
				return ring.Limits{Items: int(max(s.Bytes/each, 1)), Bytes: s.Bytes}
			}
		}
		return ring.Limits{}
	}
	can, err := canbus.New(perPort(budget.CANFrames, canbus.FrameBytes()))
	if err != nil {
		return nil, err
	}
	j1587s, err := j1587.New(perPort(budget.J1708Messages, j1587.MessageBytes()))
	if err != nil {
		return nil, err
	}
	samples, sessions := shareOf(plan, budget.J1939Samples, ""), shareOf(plan, budget.J1939Sessions, "")
	j1939s, err := j1939.New(j1939.Limits{
		Samples:  ring.Limits{Items: int(max(samples/j1939.SampleBytes(), 1)), Bytes: samples},
		Sessions: ring.Limits{Items: int(max(sessions/j1939.SessionBytes(), 1)), Bytes: sessions},
	})
	if err != nil {
		return nil, err
	}
	// Dialogs vary in size: the count is what the share holds at the
	// least a dialog weighs, so the byte share decides (issue #33: a
	// fixed 100,000 evicted dialogs a large budget had room for).
	dialogs := shareOf(plan, budget.SIPDialogs, "")
	sipStore, err := sip.New(sip.Limits{Dialogs: int(max(dialogs/sip.MinDialogBytes(), 1)), DialogBytes: dialogs,
		MessageBytes: shareOf(plan, budget.SIPMessages, "")})
	if err != nil {
		return nil, err
	}
	sipFeed := sip.NewAnalyser(sipStore, dec)
	tlsKeys := tlsdecrypt.NewKeys(0)
	sipFeed.SetTLSKeys(tlsKeys, tlsdecrypt.Limits{})
	mediaOpt.MaxBytes = shareOf(plan, budget.RTP, "")
	media := rtp.NewAnalyser(mediaOpt) // heuristic RTP off unless media.heuristic_rtp (issue #4)
	mediaInterval := mediaOpt.Interval
	if mediaInterval <= 0 {
		mediaInterval = rtp.DefaultInterval
	}
	sipFeed.SetMediaHook(media)
	// Trunk health sees every SPAN port's and opened capture's TCP
	// segments on SIP ports and TLS handshakes on SIPS ports.
	trunkTable := trunk.New(trunkOpt)
	sipFeed.SetTCPHook(trunkTable)
	uds, err := isotp.New(isotp.LimitsFor(shareOf(plan, budget.UDS, "")))
	if err != nil {
		return nil, err
	}
	a := &analysers{
		plan:          plan,
		frameItems:    st.FramesPerPort,
		can:           can,
		j1939:         j1939s,
		j1587:         j1587s,
		sip:           sipStore,
		sipFeed:       sipFeed,
		tlsKeys:       tlsKeys,
		media:         media,
		trunk:         trunkTable,
		mediaInterval: mediaInterval,
		frames:        map[string]*framestore.Store{},
		tunnels:       map[string]*netdecode.TunnelCounts{},
		handoffs:      map[string]*capture.Handoff{},
		sipExport:     sip.NewExporter(exportDir, dec),
		dbc:           dbc.NewRegistry(st.DataDir),
		uds:           uds,
		j1708Load:     map[string]*transmit.LoadMeter{},
	}
	a.sipExport.SetTLSKeys(tlsKeys)
	// An operator's J1939 DBC extends the SPN catalogue of every J1939
	// view from the moment dbc_load reads it.
	a.dbc.Watch(func(loaded []*dbc.Database) {
		cat, _ := j1939.NewCatalogue(loaded...) // the catalogue keeps its notes
		a.j1939.SetCatalogue(cat)
	})
	return a, nil
}

// preloadDBC loads dbc.preload's files as dbc_load would, each under its
// name without .dbc. A file that does not load stops the start: the
// operator named it, and every decode with it would be missing.
func (a *analysers) preloadDBC(ctx context.Context, files []string, log *slog.Logger) error {
	for _, f := range files {
		db, err := a.dbc.Load(ctx, "", f)
		if err != nil {
			return fmt.Errorf("dbc.preload %s (in %s): %w", f, a.dbc.Dir(), err)
		}
		log.Info("DBC preloaded", "file", f, "name", db.Name, "messages", len(db.Messages), "warnings", len(db.Warnings))
		for _, w := range db.Warnings {
			log.Warn("DBC read with a deviation", "file", f, "warning", w)
		}
	}
	return nil
}

// consumer is what a port's consumer does with each batch: it returns how
// many frames it could not read, which the port counts; a frame a store
// refuses (oversize) is counted by the store.
type consumer func(frames []capture.Frame) (undecodable int)

// attach returns what a port's consumer does with its frames and where
// they are kept. Each frame is stored once: by the analyser that owns the
// medium (CAN, J1708) or, for Ethernet, in a raw frame ring.
func (a *analysers) attach(name string, kind capture.Kind) (consumer, func() budget.Use, error) {
	// Ports are planned at start-up: one the plan has no share for would
	// hold memory no budget counts.
	if store := portStore(kind); store != "" {
		if _, planned := a.plan.Share(store, name); !planned {
			return nil, nil, fmt.Errorf("port %s: the memory budget was planned at start-up without it (no %s share)", name, store)
		}
	}
	switch kind {
	case capture.KindCAN:
		p, err := a.can.Port(name, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("port %s: %w", name, err)
		}
		j, err := a.j1939.Feeder(name)
		if err != nil {
			return nil, nil, fmt.Errorf("port %s: %w", name, err)
		}
		recs := new([canChunk]canbus.Record)
		return func(frames []capture.Frame) int { return feedCAN(name, p, j, a.uds, recs, frames) },
			func() budget.Use { return a.use(budget.CANFrames, name, p.FrameStats()) }, nil
	case capture.KindJ1708:
		p, err := a.j1587.Port(name)
		if err != nil {
			return nil, nil, fmt.Errorf("port %s: %w", name, err)
		}
		load := transmit.NewLoadMeter(transmit.J1708Bitrate)
		a.j1708Load[name] = load
		return func(frames []capture.Frame) int {
				for i := range frames {
					f := &frames[i]
					load.Add(f.Time, len(f.Data)*transmit.J1708BitsPerByte)
					p.Add(f.Time, f.Data, f.Link == wire.LinkJ2497)
				}
				return 0
			},
			func() budget.Use { return a.use(budget.J1708Messages, name, p.MessageStats()) }, nil
	}
	// Ethernet: raw frames for export, and the SIP analyser. Ports share
	// one analyser because its fragment and TCP tables are keyed by address.
	share := shareOf(a.plan, budget.Frames, name)
	items := a.frameItems
	if items <= 0 {
		items = int(max(share/int64(ring.SlotBytes[framestore.Record]()), 1))
	}
	fs, err := framestore.New(framestore.Limits{Items: items, Bytes: share})
	if err != nil {
		return nil, nil, fmt.Errorf("port %s: %w", name, err)
	}
	a.framesMu.Lock()
	a.frames[name] = fs
	a.framesMu.Unlock()
	a.sipExport.AddPort(name, fs)
	tunnels := new(netdecode.TunnelCounts)
	a.tunnelsMu.Lock()
	a.tunnels[name] = tunnels
	a.tunnelsMu.Unlock()
	return func(frames []capture.Frame) int {
		a.spanMu.Lock()
		defer a.spanMu.Unlock()
		storeFrames(fs, frames)
		// One lock each for the batch, not per frame (issue #14).
		a.sipFeed.Hold()
		defer a.sipFeed.Release()
		before := a.sipFeed.Tunnels()
		for i := range frames {
			f := &frames[i]
			a.sipFeed.Feed(f.Time, f.Link, f.Data)
		}
		if opened := a.sipFeed.Tunnels().Sub(before); opened != (netdecode.TunnelCounts{}) {
			a.tunnelsMu.Lock()
			tunnels.Add(opened)
			a.tunnelsMu.Unlock()
		}
		return 0
	}, func() budget.Use { return a.use(budget.Frames, name, fs.Stats()) }, nil
}

// portTunnels are the tunnel headers port name's frames opened, by kind;
// nil for a port that is not Ethernet or met no tunnel.
func (a *analysers) portTunnels(name string) map[string]uint64 {
	a.tunnelsMu.Lock()
	defer a.tunnelsMu.Unlock()
	if t := a.tunnels[name]; t != nil {
		return t.Map()
	}
	return nil
}

// storeBlock is how many frames storeFrames hands the store at once.
const storeBlock = 64

// storeFrames keeps a copy of every frame in fs, a block at a time: the
// store takes its locks once a block, not once a frame, and the block's
// records live on the stack. An oversize frame is refused and counted by
// the store.
func storeFrames(fs *framestore.Store, frames []capture.Frame) {
	var recs [storeBlock]framestore.Record
	for len(frames) > 0 {
		n := min(len(frames), storeBlock)
		for i := range frames[:n] {
			// Field by field: a composite literal is built on the stack
			// and copied, a store-forwarding stall a frame.
			f, r := &frames[i], &recs[i]
			r.Time, r.Link, r.Data, r.OrigLen = f.Time, f.Link, f.Data, f.OrigLen
		}
		fs.AppendAll(recs[:n])
		frames = frames[n:]
	}
}

// portStore is the store a port of kind keeps its own frames in.
func portStore(kind capture.Kind) string {
	switch kind {
	case capture.KindCAN:
		return budget.CANFrames
	case capture.KindJ1708:
		return budget.J1708Messages
	case capture.KindEthernet:
		return budget.Frames
	}
	return ""
}

// canChunk is how many frames feedCAN hands the stores at once: each
// store takes its locks once a chunk, and a port's scratch stays a
// fixed 10 KiB whatever batch a source hands off.
const canChunk = 256

// feedCAN decodes SocketCAN bytes once and hands plain values to the CAN,
// J1939 and UDS stores, a chunk at a time; services/ never sees a driver
// type. The UDS store sees every frame the port's ring stores, in the
// same order, so its frame numbers are the ring's sequence numbers.
// recs is the port's scratch.
func feedCAN(name string, p *canbus.Port, j *j1939.Feeder, uds *isotp.Store, recs *[canChunk]canbus.Record, frames []capture.Frame) (bad int) {
	for len(frames) > 0 {
		n := 0
		for len(frames) > 0 && n < canChunk {
			id, flags, data, err := wire.DecodeCANFD(frames[0].Data)
			if err != nil {
				bad++
			} else {
				r := &recs[n]
				r.Time, r.ID = frames[0].Time, id
				// The record is reused: SetData leaves no byte of an
				// earlier frame past this one's length.
				r.SetData(flags, data)
				n++
			}
			frames = frames[1:]
		}
		rs := recs[:n]
		p.AddAll(rs)
		j.FeedAll(rs)
		// A port beyond the store's bound is counted there (port_overflow).
		_ = uds.FeedAll(name, rs)
	}
	return bad
}

// sipStats reads the SPAN analyser's counters for get_capture_report.
func (a *analysers) sipStats() (sip.StreamStats, netdecode.Stats) {
	a.spanMu.Lock()
	defer a.spanMu.Unlock()
	return a.sipFeed.Stats()
}
