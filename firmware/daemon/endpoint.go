package daemon

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/mcp"
	"fieldtap/mcp/front"
	"fieldtap/services/coverage"
	"fieldtap/services/ports"
)

// startEndpoint builds the MCP server over everything the stages before
// it started and serves it on the configured transport until the stage
// stops (or, over stdio, the client closes stdin: served closes). An HTTP
// address that cannot be listened on fails the stage. Its stop drains
// the calls in flight (serveHTTP, front.ServeStdio) and joins the server.
func (b *box) startEndpoint(ctx context.Context) (func() error, error) {
	deps, downloads := b.mcpDeps()
	srv, err := mcp.NewServer(deps, mcp.Options{Bundles: deps.Info.Bundles, MaxResponseBytes: b.cfg.MCP.MaxResponseBytes,
		OutputSchemas: b.cfg.MCP.OutputSchemas, Audit: b.access.audit, Counts: b.access.counts, Logs: b.boxLog})
	if err != nil {
		return nil, err
	}
	serve := func(ctx context.Context) error {
		b.log.Info("serving MCP on stdio")
		return front.ServeStdio(ctx, srv, b.stdio.Stdin, b.stdio.Stdout, b.log)
	}
	if b.cfg.MCP.Transport == "http" {
		ln, err := net.Listen("tcp", b.cfg.MCP.Listen)
		if err != nil {
			return nil, fmt.Errorf("mcp listen %s: %w", b.cfg.MCP.Listen, err)
		}
		ep := front.NewHTTPEndpoint(srv, b.access.httpOptions(b.cfg.MCP, b.log))
		ep.ServeFiles(mcp.FilesPath, downloads)
		if b.uploads != nil {
			ep.ServeUploads(mcp.FilesPath, b.uploads)
		}
		serve = func(ctx context.Context) error { return serveHTTP(ctx, ln, ep, b.conns, b.log, b.stdio.Listening) }
	}
	serveCtx, stopServing := context.WithCancel(ctx)
	b.served = make(chan struct{})
	go func() {
		defer close(b.served)
		b.serveErr = serve(serveCtx)
	}()
	return func() error {
		stopServing()
		<-b.served
		b.log.Info("MCP endpoint stopped; stopping the rest")
		return nil
	}, nil
}

// bundles is what the MCP server loads: every compiled bundle except
// transmit, the vehicle depth only on a box with a CAN or J1708 port or
// capture file, unless the operator names the bundles ("all": every one).
func (b *box) bundles() []string {
	vehicle := slices.ContainsFunc(b.sources, func(s capture.Source) bool {
		return s.Kind() == capture.KindCAN || s.Kind() == capture.KindJ1708
	})
	names := b.cfg.MCP.Bundles
	if len(names) == 0 {
		names = nil // unset: the defaults
	}
	return mcp.ResolveBundles(names, vehicle)
}

// mcpDeps is what the MCP layer reads, and over HTTP the file server its
// downloads go through. It holds every store whether or not a port of
// its kind exists: mcp.NewServer refuses a Deps without a store a loaded
// bundle needs, and the tools read theirs without a nil check. The
// recorder (list_captures, find_in_captures) and the evidence builder
// (build_evidence_package) are nil when off, which the tools report;
// files is the sandbox of the HTTP GET and the file resources, captures
// opens store.capture_dir's files (open_capture).
func (b *box) mcpDeps() (mcp.Deps, *front.FileServer) {
	identity := fmt.Sprintf("%s-%x", b.cfg.Board, time.Now().UnixNano())
	deps := mcp.Deps{
		Info: mcp.ServerInfo{
			Version:       b.version,
			Build:         buildInfo(),
			Board:         b.cfg.Board,
			Transport:     b.cfg.MCP.Transport,
			Transports:    []string{"stdio", "http"},
			Compiled:      mcp.BundleNames(),
			OutputSchemas: b.cfg.MCP.OutputSchemas,
			Bundles:       b.bundles(),
		},
		Ports: &b.reg,
		Source: func() mcp.SourceInfo {
			return sourceInfo(identity, b.reg.Snapshot())
		},
		Log:           b.log,
		Coverage:      func(q coverage.Query) coverage.Report { return b.an.coverageOf(&b.reg, q) },
		Files:         b.files,
		CAN:           b.an.can,
		J1939:         b.an.j1939,
		DBC:           b.an.dbc,
		UDS:           b.an.uds,
		J1587:         b.an.j1587,
		SIP:           b.an.sip,
		SIPStats:      b.an.sipStats,
		SIPExport:     b.an.sipExport,
		Media:         b.an.media,
		MediaInterval: b.an.mediaInterval,
		Transmit:      b.tx,
		Trunk:         b.an.trunk,
		Marks:         b.marks,
		BlackBox:      mcp.BlackBox{Recorder: b.rec.rec, RecorderOff: b.rec.why, Evidence: b.seal.builder, Captures: b.captures, Files: b.catalog, Uploads: b.uploads},
		Rules:         b.rules,
	}
	var downloads *front.FileServer
	if b.cfg.MCP.Transport == "http" {
		downloads = front.NewFileServer(b.files)
		deps.BlackBox.Downloads = downloadCounts{downloads}
		deps.Info.Listen = b.cfg.MCP.Listen
	}
	// The configuration is checked, thresholds included.
	deps.SIPSecurity, _ = b.cfg.SIPSecurity.Thresholds()
	return deps, downloads
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
