package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"fieldtap/board/sim"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/filesource"
	"fieldtap/firmware/config"
	"fieldtap/mcp"
	"fieldtap/services/budget"
	"fieldtap/services/ports"
)

// shutdownGrace is how long HTTP clients get to finish on SIGTERM.
const shutdownGrace = 5 * time.Second

// IO is where the stdio transport talks and where the HTTP transport
// reports its address once listening.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	// Listening, if set, is called with the HTTP address once it accepts.
	Listening func(addr string)
}

// Run runs the box until ctx ends (or, over stdio, until the client closes
// stdin). Ports are started before the MCP endpoint, so the first call
// already sees them.
func Run(ctx context.Context, cfg config.Config, version string, log *slog.Logger, stdio IO) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
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
		sources = append(sources, sim.Ports(sim.Options{Speed: speed, Seed: sim.DefaultSeed})...)
	}
	var reg ports.Registry
	boardCtx, stopBoard := context.WithCancel(ctx)
	defer stopBoard()
	hw, err := startBoard(boardCtx, cfg, &reg, log)
	if err != nil {
		return err
	}
	for _, pc := range hw.ports {
		src, err := openPort(pc)
		if err != nil {
			return err
		}
		sources = append(sources, src)
	}
	for i, path := range cfg.Sources {
		src, err := filesource.Open(fileName(i), path, log)
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
	an.linkCAN(sources, hw.ports)
	portCtx, stopPorts := context.WithCancel(ctx)
	defer stopPorts()
	var wg sync.WaitGroup
	var running []*port
	for _, src := range sources {
		p, err := newPort(src, cfg.Store.HandoffDepth, an)
		if err != nil {
			return fmt.Errorf("port %s: %w", src.Name(), err)
		}
		reg.Add(p.status)
		running = append(running, p)
		p.run(portCtx, &wg, log)
	}

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
	deps.Info.Compiled = mcp.BundleNames(deps)
	// Every compiled bundle loads except transmit, unless the operator
	// names the bundles.
	deps.Info.Bundles = cfg.MCP.Bundles
	if len(deps.Info.Bundles) == 0 {
		deps.Info.Bundles = mcp.DefaultBundles(deps)
	}
	if cfg.MCP.Transport == "http" {
		deps.Info.Listen = cfg.MCP.Listen
	}
	tx, closeTx, err := newTransmitter(portCtx, cfg, hw.arm, sources, deps.Info.Bundles, deps.CAN, log)
	if err != nil {
		return err
	}
	defer closeTx()
	deps.Transmit = tx
	srv, err := mcp.NewServer(deps, mcp.Options{Bundles: deps.Info.Bundles, MaxResponseBytes: cfg.MCP.MaxResponseBytes, Audit: access.audit})
	if err != nil {
		return err
	}

	switch cfg.MCP.Transport {
	case "stdio":
		log.Info("serving MCP on stdio")
		err = mcp.ServeStdio(ctx, srv, stdio.Stdin, stdio.Stdout, log)
	default:
		err = serveHTTP(ctx, cfg.MCP.Listen, mcp.HTTPHandler(srv, access.httpOptions(cfg.MCP, log)), log, stdio.Listening)
	}
	stopPorts()
	wg.Wait()
	log.Info("stopped", "ports", len(running))
	return err
}

// logPlan logs the budget and each store's share once at start-up.
func logPlan(log *slog.Logger, p budget.Plan) {
	log.Info("memory budget", "budget", budget.MiB(p.Budget), "from", p.From, "stores", budget.MiB(p.Pool), "shares", budget.MiB(p.Sum()))
	for _, s := range p.Shares {
		log.Debug("memory share", "store", s.Store, "port", s.Port, "bytes", s.Bytes, "fixed", s.Fixed, "why", s.Why)
	}
}

func serveHTTP(ctx context.Context, addr string, h http.Handler, log *slog.Logger, listening func(string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp listen %s: %w", addr, err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String() + mcp.Path
	log.Info("serving MCP over HTTP", "url", url)
	if listening != nil {
		listening(ln.Addr().String())
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
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
