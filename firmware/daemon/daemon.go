package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"fieldtap/board/sim"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/filesource"
	"fieldtap/firmware/config"
	"fieldtap/mcp"
	"fieldtap/mcp/front"
	"fieldtap/services/budget"
	"fieldtap/services/coverage"
	"fieldtap/services/ports"
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
// caller checks it, once) until ctx ends (or, over stdio, until the
// client closes stdin). Ports are started before the MCP endpoint, so the first call
// already sees them. When ctx ends, the parts stop in the reverse order
// they started, each joined before the next stops: the MCP endpoint
// drains its calls in flight (front.ShutdownDrain, then cancels and records
// the rest), the transmit service stops and its audit file closes, the
// ports stop and the recorder writes what they delivered, the exporters
// and the status page say goodbye, the board's LED and arm watchers stop,
// and the MCP audit file closes last. Run returns nil after a shutdown, drained or not.
func Run(ctx context.Context, checked config.Checked, version string, log *slog.Logger, stdio IO) error {
	cfg := checked.Config()
	// Every warning of the box (a driver's, a port's restart, the
	// recorder's, the MCP server's) also reaches the MCP sessions whose
	// logging level asks for it, bounded and rate-limited per session.
	boxLog := mcp.NewBoxLog()
	log = slog.New(boxLog.Handler(log.Handler()))
	// Before anything else: no CAN port stays able to transmit after a
	// run that was killed mid-plan.
	resets := listenOnlyFirst(ctx, cfg, log)
	speed, _ := cfg.Speed()
	// Tokens and the audit file are opened before any port starts: a path
	// that cannot be opened stops startup, not the first call.
	access, err := openMCPAccess(cfg.MCP)
	if err != nil {
		return err
	}
	defer access.close()

	var sources []capture.Source
	if cfg.Board == "sim" {
		// The demo truck has a service tool on it, so uds_trace and the
		// J1939 clears have something to show.
		now, _ := cfg.SimClock()
		sources = append(sources, sim.Ports(sim.Options{Speed: speed, Seed: sim.DefaultSeed, Now: now, Workshop: true})...)
	}
	var reg ports.Registry
	// Capture, the board and the transmit service outlive ctx: calls
	// draining at shutdown still read them. Each stops in its defer.
	running := context.WithoutCancel(ctx)
	boardCtx, stopBoard := context.WithCancel(running)
	var boardWG sync.WaitGroup
	defer func() { stopBoard(); boardWG.Wait() }()
	hw, err := startBoard(boardCtx, &boardWG, cfg, &reg, log)
	if err != nil {
		return err
	}
	silentAfter := map[string]time.Duration{} // by port name; the default for the others
	for _, pc := range hw.ports {
		src, err := openPort(pc)
		if err != nil {
			return err
		}
		if silentAfter[pc.Name], err = config.SilentAfter(pc); err != nil {
			return fmt.Errorf("port %s: %w", pc.Name, err)
		}
		sources = append(sources, src)
	}
	for i, path := range cfg.Sources {
		src, err := filesource.Open(fileName(i), path, log.With("port", fileName(i)))
		if err != nil {
			// The box keeps serving its other ports; capture_status says why this one is empty.
			log.Error("capture file not opened", "port", fileName(i), "err", err)
			reg.Add(failedPort(fileName(i), path, err))
			continue
		}
		sources = append(sources, src)
	}

	mediaOpt, err := mediaOptions(cfg.Media)
	if err != nil {
		return err
	}
	// Every store's bound comes from one budget; a configuration whose
	// bounds do not fit is refused before any port starts.
	plan, err := planBudget(cfg, sources)
	if err != nil {
		return err
	}
	logPlan(log, plan)
	an, err := newAnalysers(plan, cfg.Store, mediaOpt)
	if err != nil {
		return err
	}
	reg.SetBudget(an.budgetStatus)
	// The export directory is made (0700) or checked now, so a planted
	// one is reported at start-up; capture does not depend on it.
	if err := an.sipExport.Prepare(); err != nil {
		log.Error("export directory not usable; export_capture will refuse until it is fixed", "err", err)
	}
	an.linkCAN(sources, hw.ports)
	// The recorder recovers its directory before any port opens, and the
	// analysers are refilled from it before any port delivers a frame.
	rec := openRecording(cfg.Recorder, shareOf(plan, budget.Recorder, "")/2, "fieldtapd "+version, log)
	if rec.rec != nil {
		an.sipExport.UseRecorder(rec.rec) // an old call exports whole from disk
	}
	// The exporters and the status page stop after the ports, so the
	// last frames still reach them; fleetWG waits for their goodbyes.
	fleetCtx, stopFleet := context.WithCancel(running)
	var fleetWG sync.WaitGroup
	defer func() { stopFleet(); fleetWG.Wait() }()
	hepExp, err := startHEP(fleetCtx, cfg.HEP, an, &fleetWG, log)
	if err != nil {
		rec.close(log)
		return err
	}
	portCtx, stopPorts := context.WithCancel(running)
	defer stopPorts()
	var wg sync.WaitGroup
	var started []*port
	for _, src := range sources {
		p, err := newPort(src, an, portOptions{depth: cfg.Store.HandoffDepth, silentAfter: silentAfter[src.Name()]})
		if err != nil {
			rec.close(log)
			return fmt.Errorf("port %s: %w", src.Name(), err)
		}
		rec.attach(p, an)
		reg.Add(p.status)
		started = append(started, p)
	}
	rec.refill(ctx, refillBudget(started), started, log)
	seal := openSealing(cfg.Recorder, rec, an, version, log)
	files, err := fileSandbox(cfg, an, seal)
	if err != nil {
		rec.close(log)
		return err
	}
	recCtx, stopRecorder := context.WithCancel(context.Background())
	var recWG sync.WaitGroup
	rec.run(recCtx, &recWG)
	seal.run(recCtx, &recWG, log)
	// The MCP layer reaches these through deps.BlackBox: rec.rec
	// (list_captures, find_in_captures), seal.builder
	// (build_evidence_package), files (the HTTP GET and, later,
	// resources), captures (open_capture).
	captures := newCaptureOpener(files, an, &reg, rec, cfg.Store.HandoffDepth, len(cfg.Sources), cfg.Store.OpenedCaptures, log)
	// Deferred in this order: ports stop and their consumers drain, then
	// the recorder writes what they delivered and closes.
	defer func() {
		captures.stop()
		stopPorts()
		wg.Wait()
		log.Info("ports stopped", "ports", len(started))
		stopRecorder()
		recWG.Wait()
		rec.close(log)
	}()
	for _, p := range started {
		p.run(portCtx, &wg, log)
	}
	if slices.ContainsFunc(started, probed) {
		wg.Go(func() { watchLinks(portCtx, started, log) })
	}
	captures.start(portCtx, &wg)

	identity := fmt.Sprintf("%s-%x", cfg.Board, time.Now().UnixNano())
	deps := mcp.Deps{
		Ports: &reg,
		Log:   log,
		Source: func() mcp.SourceInfo {
			return sourceInfo(identity, reg.Snapshot())
		},
		Info: mcp.ServerInfo{
			Version:    version,
			Build:      buildInfo(),
			Board:      cfg.Board,
			Transport:  cfg.MCP.Transport,
			Transports: []string{"stdio", "http"},
		},
	}
	an.deps(&deps)
	deps.Coverage = func(q coverage.Query) coverage.Report { return an.coverageOf(&reg, q) }
	deps.BlackBox = mcp.BlackBox{Recorder: rec.rec, RecorderOff: rec.why, Evidence: seal.builder, Files: files, Captures: captures}
	var downloads *front.FileServer
	if cfg.MCP.Transport == "http" {
		downloads = front.NewFileServer(files)
		deps.BlackBox.Downloads = downloadCounts{downloads}
	}
	// Checked when the configuration was validated.
	deps.SIPSecurity, _ = cfg.SIPSecurity.Thresholds()
	deps.Info.Compiled = mcp.BundleNames()
	deps.Info.OutputSchemas = cfg.MCP.OutputSchemas
	// Every compiled bundle loads except transmit, unless the operator
	// names the bundles.
	deps.Info.Bundles = cfg.MCP.Bundles
	if len(deps.Info.Bundles) == 0 {
		deps.Info.Bundles = mcp.DefaultBundles()
	}
	if cfg.MCP.Transport == "http" {
		deps.Info.Listen = cfg.MCP.Listen
	}
	txCtx, stopTx := context.WithCancel(running)
	var txWG sync.WaitGroup
	tx, outcomes, closeTx, err := newTransmitter(txCtx, &txWG, cfg, hw, sources, deps.Info.Bundles, an, resets, log)
	if err != nil {
		stopTx()
		return err
	}
	// The service's goroutine is joined before its audit file closes, so
	// no record is written to a closed file.
	defer func() { stopTx(); txWG.Wait(); closeTx() }()
	deps.Transmit = tx
	if err := startPage(fleetCtx, cfg, version, access, hw, &reg, an, rec, tx, outcomes, hepExp, &fleetWG, log); err != nil {
		return err
	}
	srv, err := mcp.NewServer(deps, mcp.Options{Bundles: deps.Info.Bundles, MaxResponseBytes: cfg.MCP.MaxResponseBytes, OutputSchemas: cfg.MCP.OutputSchemas, Audit: access.audit, Counts: access.counts, Logs: boxLog})
	if err != nil {
		return err
	}

	switch cfg.MCP.Transport {
	case "stdio":
		log.Info("serving MCP on stdio")
		err = front.ServeStdio(ctx, srv, stdio.Stdin, stdio.Stdout, log)
	default:
		ep := front.NewHTTPEndpoint(srv, access.httpOptions(cfg.MCP, log))
		ep.ServeFiles(mcp.FilesPath, downloads)
		err = serveHTTP(ctx, cfg.MCP.Listen, ep, log, stdio.Listening)
	}
	log.Info("MCP endpoint stopped; stopping the rest")
	return err
}

// logPlan logs the budget and each store's share once at start-up.
func logPlan(log *slog.Logger, p budget.Plan) {
	log.Info("memory budget", "budget", budget.MiB(p.Budget), "from", p.From, "stores", budget.MiB(p.Pool), "shares", budget.MiB(p.Sum()))
	for _, s := range p.Shares {
		log.Debug("memory share", "store", s.Store, "port", s.Port, "bytes", s.Bytes, "fixed", s.Fixed, "why", s.Why)
	}
}

// sourceInfo summarises the ports for every envelope: live while any port
// is live; exhausted once every port has ended.
func sourceInfo(identity string, st []ports.Status) mcp.SourceInfo {
	si := mcp.SourceInfo{CaptureIdentity: identity, SourceExhausted: len(st) > 0}
	for _, s := range st {
		if s.Live {
			si.Live = true
		}
		if !s.SourceExhausted {
			si.SourceExhausted = false
		}
	}
	return si
}

func buildInfo() mcp.Build {
	b := mcp.Build{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	return b
}
