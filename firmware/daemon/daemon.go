package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"fieldtap/board/sim"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/filesource"
	"fieldtap/firmware/config"
	"fieldtap/mcp"
	"fieldtap/mcp/front"
	"fieldtap/services/budget"
	"fieldtap/services/hep"
	"fieldtap/services/marks"
	"fieldtap/services/metrics"
	"fieldtap/services/mqttpub"
	"fieldtap/services/ports"
	"fieldtap/services/rules"
	"fieldtap/services/sandbox"
	"fieldtap/services/tlsdecrypt"
	"fieldtap/services/transmit"
	"fieldtap/services/upload"
)

// IO is where the stdio transport talks and where the HTTP transport
// reports its address once listening.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	// Listening, if set, is called with the HTTP address once it accepts.
	Listening func(addr string)
}

// Run runs the box on a checked configuration (config.Config.Check: its
// caller checks it, once) until ctx ends or, over stdio, the client
// closes stdin. It starts the stages of box.stages in order, each logged
// at debug level:
//
//   - listen-only: every CAN port is put back in listen-only;
//   - mcp access: the tokens are loaded and the MCP audit file opened;
//   - board: SPAN, gadget and GPIO come up, the LED and arm watchers run;
//   - sources: the board's ports and the capture files are opened;
//   - stores: the memory budget is planned and every store built;
//   - exporters: the HEP exporter taps the SPAN analyser;
//   - recorder: the recorder opens and recovers its directory;
//   - ports: each source gets its port, and the stores are refilled from
//     the recorder before any port delivers;
//   - evidence: the evidence builder and the file sandbox are made;
//   - recorder writer: the recorder writes and syncs, evidence is built;
//   - capture: the ports run, watched;
//   - transmit: the gatekeeper opens its audit file and runs;
//   - status page: the page, /metrics and MQTT join the exporters;
//   - mcp endpoint: MCP is served, the ports already running.
//
// When ctx ends, or a start fails, the stages that started stop in
// reverse, each joined before the next stops: the MCP endpoint drains its
// calls in flight (front.ShutdownDrain, then cancels and records the
// rest), the transmit service stops and its audit file closes, the ports
// stop and the recorder writes what they delivered, the exporters and the
// status page say goodbye, the board's LED and arm watchers stop, and the
// MCP audit file closes last. Run returns nil after a shutdown, drained or
// not, and otherwise the failed start's error or the endpoint's.
func Run(ctx context.Context, checked config.Checked, version string, log *slog.Logger, stdio IO) error {
	b := newBox(checked, version, log, stdio)
	up, err := startStages(ctx, b.log, b.stages())
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-b.served: // the stdio client closed stdin, or the HTTP server failed
	}
	up.stop()
	return b.serveErr
}

// box is what the stages bring up and share. Each stage fills its fields
// for the stages after it; a field is read only by stages after the one
// named beside it.
type box struct {
	cfg     config.Config
	version string
	log     *slog.Logger
	boxLog  *mcp.BoxLog
	stdio   IO

	resets      []transmit.PortReset     // listen-only
	access      mcpAccess                // mcp access
	reg         ports.Registry           // every stage adds what capture_status shows
	hw          hardware                 // board
	sources     []capture.Source         // sources
	opened      int                      // stores: ports reserved for open_capture
	silentAfter map[string]time.Duration // sources: by port name; the default for the others
	an          *analysers               // stores
	fleet       *group                   // exporters; the status page joins it
	hep         *hep.Exporter            // exporters: nil when off
	rec         *recording               // recorder
	marks       *marks.Store             // recorder: journaled by it when on
	ports       []*port                  // ports
	seal        *sealing                 // evidence
	files       *sandbox.Sandbox         // evidence
	catalog     *fileCatalog             // evidence: list_files' view of the files
	uploads     *upload.Table            // evidence: uploads into capture_dir and data_dir; nil when off
	captures    *captureOpener           // capture
	tx          *transmit.Service        // transmit
	outcomes    *metrics.TransmitCounter // transmit
	conns       *front.ConnPool          // stores: every HTTP listener's connections, bounded by their budget share
	rules       *rules.Engine            // rules; nil without [[rule]]
	mqtt        *mqttpub.Publisher       // status page; nil without [mqtt]
	served      chan struct{}            // mcp endpoint: closed once serving ended
	serveErr    error                    // mcp endpoint: why, set before served closes
}

func newBox(checked config.Checked, version string, log *slog.Logger, stdio IO) *box {
	// Every warning of the box (a driver's, a port's restart, the
	// recorder's, the MCP server's) also reaches the MCP sessions whose
	// logging level asks for it, bounded and rate-limited per session.
	boxLog := mcp.NewBoxLog()
	return &box{cfg: checked.Config(), version: version, log: slog.New(boxLog.Handler(log.Handler())), boxLog: boxLog, stdio: stdio}
}

// stages is the box's life in start order; Run stops them in reverse.
func (b *box) stages() []stage {
	return []stage{
		{"listen-only", b.listenOnly},
		{"mcp access", b.openAccess},
		{"board", b.bringUpBoard},
		{"sources", b.openSources},
		{"stores", b.buildStores},
		{"exporters", b.startExporters},
		{"recorder", b.openRecorder},
		{"ports", b.buildPorts},
		{"evidence", b.openEvidence},
		{"recorder writer", b.startRecorderWriter},
		{"capture", b.startCapture},
		{"transmit", b.startTransmit},
		{"rules", b.buildRules},
		{"status page", b.startStatusPage},
		{"rule watch", b.watchRules},
		{"mcp endpoint", b.startEndpoint},
	}
}

// listenOnly comes before anything else: no CAN port stays able to
// transmit after a run that was killed mid-plan (listenonly.go). The
// resets go into the transmit audit's "started" record.
func (b *box) listenOnly(ctx context.Context) (func() error, error) {
	b.resets = listenOnlyFirst(ctx, b.cfg, b.log)
	return nil, nil
}

// openAccess loads the tokens and opens the MCP audit file before any
// port starts: a path that cannot be opened stops startup, not the first
// call. Its stop closes the audit file, last of all.
func (b *box) openAccess(context.Context) (func() error, error) {
	var err error
	if b.access, err = openMCPAccess(b.cfg.MCP); err != nil {
		return nil, err
	}
	return b.access.close, nil
}

// bringUpBoard runs startBoard; its stop joins the LED and arm watchers,
// which leave the LEDs off.
func (b *box) bringUpBoard(ctx context.Context) (func() error, error) {
	g := newGroup(ctx)
	hw, err := startBoard(g.ctx, &g.wg, b.cfg, &b.reg, b.log)
	if err != nil {
		g.stop()
		return nil, err
	}
	b.hw = hw
	return g.stop, nil
}

// openSources makes a source of every port: the sim board's, the board
// profile's and [[port]] tables, and each --source file. A file that
// cannot be opened is registered failed and the box serves the rest.
func (b *box) openSources(context.Context) (func() error, error) {
	if b.cfg.Board == "sim" {
		// The demo truck has a service tool on it, so uds_trace and the
		// J1939 clears have something to show.
		speed, _ := b.cfg.Speed()
		now, _ := b.cfg.SimClock()
		b.sources = append(b.sources, sim.Ports(sim.Options{Speed: speed, Seed: sim.DefaultSeed, Now: now, Workshop: true})...)
	}
	b.silentAfter = map[string]time.Duration{}
	for _, pc := range b.hw.ports {
		src, err := openPort(pc)
		if err != nil {
			return nil, err
		}
		if b.silentAfter[pc.Name], err = config.SilentAfter(pc); err != nil {
			return nil, fmt.Errorf("port %s: %w", pc.Name, err)
		}
		b.sources = append(b.sources, src)
	}
	for i, path := range b.cfg.Sources {
		src, err := filesource.Open(fileName(i), path, b.log.With("port", fileName(i)))
		if err != nil {
			// The box keeps serving its other ports; capture_status says why this one is empty.
			b.log.Error("capture file not opened", "port", fileName(i), "err", err)
			b.reg.Add(failedPort(fileName(i), path, err))
			continue
		}
		takeSecrets(src, func() *tlsdecrypt.Keys { return b.an.tlsKeys }, b.log)
		b.sources = append(b.sources, src)
	}
	return nil, nil
}

// buildStores derives every store's bound from one budget, refusing a
// configuration whose bounds do not fit before any port starts, and
// builds the analysers.
func (b *box) buildStores(ctx context.Context) (func() error, error) {
	mediaOpt, err := mediaOptions(b.cfg.Media)
	if err != nil {
		return nil, err
	}
	if b.opened, err = openedCaptures(b.cfg, b.sources); err != nil {
		return nil, err
	}
	if n, explicit, _ := b.cfg.OpenedCapturesFor(); !explicit && n > b.opened {
		b.log.Info("open_capture ports reserved fewer than the board profile's", "reserved", b.opened, "profile", n,
			"why", "the configured ports leave no room in the memory budget")
	}
	plan, err := planBudget(b.cfg, b.sources)
	if err != nil {
		return nil, err
	}
	logPlan(b.log, plan)
	// The connections' share holds the PUT pieces beside the connections.
	conns := max(0, shareOf(plan, budget.Connections, "")-front.PutBufferBytes) / front.ConnBytes
	b.conns = front.NewConnPool(int(conns), front.DefaultConnsPerAddr, b.log)
	dec := b.cfg.DecodeOptions()
	mediaOpt.VXLANPorts = dec.VXLANPorts
	if b.an, err = newAnalysers(plan, b.cfg.Store, mediaOpt, dec, b.cfg.TrunkOptions()); err != nil {
		return nil, err
	}
	b.reg.SetBudget(b.an.budgetStatus)
	if err := b.an.preloadDBC(ctx, b.cfg.DBC.Preload, b.log); err != nil {
		return nil, err
	}
	loadKeyLogs(b.an.tlsKeys, b.cfg, b.log)
	// The export directory is made (0700) or checked now, so a planted
	// one is reported at start-up; capture does not depend on it.
	if err := b.an.sipExport.Prepare(); err != nil {
		b.log.Error("export directory not usable; export_capture will refuse until it is fixed", "err", err)
	}
	b.an.linkCAN(b.sources, b.hw.ports)
	return nil, nil
}

// startExporters starts the group the exporters and the status page run
// in, with the HEP exporter. It starts before the ports and stops after
// them, so the last frames still reach the exporters; its stop waits for
// their goodbyes.
func (b *box) startExporters(ctx context.Context) (func() error, error) {
	b.fleet = newGroup(ctx)
	var err error
	if b.hep, err = startHEP(b.fleet.ctx, b.cfg.HEP, b.an, &b.fleet.wg, b.log); err != nil {
		b.fleet.stop()
		return nil, err
	}
	return b.fleet.stop, nil
}

// openRecorder opens the recorder and recovers its directory before any
// port opens. Its stop writes what is left and closes the open segment.
func (b *box) openRecorder(context.Context) (func() error, error) {
	b.rec = openRecording(b.cfg.Recorder, b.cfg.DecodeOptions().VXLANPorts, shareOf(b.an.plan, budget.Recorder, "")/2, "fieldtapd "+b.version, b.log)
	if b.rec.rec == nil {
		b.marks = marks.New(nil, nil)
		return nil, nil
	}
	b.marks = journaledMarks(b.rec.rec, b.log)
	b.an.sipExport.UseRecorder(b.rec.rec) // an old call exports whole from disk
	return func() error { return b.rec.close(b.log) }, nil
}

// buildPorts gives each source its port, recorder handle and place in
// capture_status, then refills the stores from the recorder before any
// port delivers a frame.
func (b *box) buildPorts(ctx context.Context) (func() error, error) {
	for _, src := range b.sources {
		p, err := newPort(src, b.an, portOptions{depth: b.cfg.Store.HandoffDepth, silentAfter: b.silentAfter[src.Name()]})
		if err != nil {
			return nil, fmt.Errorf("port %s: %w", src.Name(), err)
		}
		b.rec.attach(p, b.an)
		b.reg.Add(p.status)
		b.ports = append(b.ports, p)
	}
	b.rec.refill(ctx, refillBudget(b.ports), b.ports, b.log)
	return nil, nil
}

// openEvidence builds the evidence builder over the recorder and the one
// sandbox the MCP file tools read through.
func (b *box) openEvidence(context.Context) (func() error, error) {
	b.seal = openSealing(b.cfg.Recorder, b.rec, b.an, b.version, b.log)
	var err error
	if b.files, err = fileSandbox(b.cfg, b.an, b.seal); err != nil {
		return nil, err
	}
	if b.catalog, err = newFileCatalog(b.cfg, b.files); err != nil {
		return nil, err
	}
	// Uploads are a convenience: a directory whose stale partials cannot
	// be removed turns them off, not the box.
	if b.uploads, err = newUploads(b.cfg); err != nil {
		b.log.Warn("uploads off", "err", err)
	}
	return nil, nil
}

// startRecorderWriter runs the recorder's writer and the evidence builds
// and triggers. Its stop, after the ports', joins them: the writer has
// written what the ports delivered.
func (b *box) startRecorderWriter(ctx context.Context) (func() error, error) {
	g := newGroup(ctx)
	b.rec.run(g.ctx, &g.wg)
	b.seal.run(g.ctx, &g.wg, b.log)
	return g.stop, nil
}

// startCapture runs every port, the link watcher when a port can be
// probed, and lets open_capture add ports. Its stop refuses further
// opens, then stops the ports and joins their supervisors and consumers.
func (b *box) startCapture(ctx context.Context) (func() error, error) {
	g := newGroup(ctx)
	b.captures = &captureOpener{files: b.files, an: b.an, reg: &b.reg, rec: b.rec, depth: b.cfg.Store.HandoffDepth,
		slots: b.opened, next: len(b.cfg.Sources) + 1, log: b.log}
	for _, p := range b.ports {
		p.run(g.ctx, &g.wg, b.log)
	}
	if slices.ContainsFunc(b.ports, probed) {
		g.wg.Go(func() { watchLinks(g.ctx, b.ports, b.log) })
	}
	b.captures.start(g.ctx, &g.wg)
	return func() error {
		b.captures.stop()
		g.stop()
		b.log.Info("ports stopped", "ports", len(b.ports))
		return nil
	}, nil
}

// logPlan logs the budget and each store's share once at start-up.
func logPlan(log *slog.Logger, p budget.Plan) {
	log.Info("memory budget", "budget", budget.MiB(p.Budget), "from", p.From, "stores", budget.MiB(p.Pool), "shares", budget.MiB(p.Sum()))
	for _, s := range p.Shares {
		log.Debug("memory share", "store", s.Store, "port", s.Port, "bytes", s.Bytes, "fixed", s.Fixed, "why", s.Why)
	}
}
