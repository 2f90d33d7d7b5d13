// Command fieldtapd is the capture box: it opens the board's ports and any
// capture files, keeps bounded stores of what they carry, and answers MCP
// clients over stdio or HTTP. Logs go to stderr only; with
// --mcp-transport stdio, stdout is the JSON-RPC wire.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"fieldtap/firmware/config"
	"fieldtap/firmware/daemon"
	"fieldtap/firmware/loglimit"
	"fieldtap/mcp"
	"fieldtap/mcp/front"
)

// version is set at link time by the Makefile (-X main.version=…).
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// repeated collects a repeatable string flag.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fieldtapd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfgPath   = fs.String("config", "", "TOML configuration file (see docs/configuration.md)")
		board     = fs.String("board", config.DefaultBoard, "board profile: "+strings.Join(config.Boards(), ", ")+" (none opens only --source files)")
		transport = fs.String("mcp-transport", config.DefaultTransport, "MCP transport: stdio or http")
		listen    = fs.String("mcp-listen", config.DefaultListen, "HTTP listen address; the endpoint is at /mcp")
		speed     = fs.String("replay-speed", config.DefaultReplaySpeed, "sim board pace: realtime, max, or a factor such as 10x")
		simStart  = fs.String("sim-start", "", "sim board's first capture time, RFC 3339 (default: the clock); fixed, two runs are identical")
		logLevel  = fs.String("log-level", "info", "debug, info, warn or error")
		logFormat = fs.String("log-format", "text", "text or json")
		showVer   = fs.Bool("version", false, "print the version and exit")
		runAs     = fs.String("user", "", "as root: bring up the board, then run as this user with only CAP_NET_RAW and CAP_NET_ADMIN")
		prepOnly  = fs.Bool("prepare-only", false, "bring up the board's SPAN port and USB gadget, log each outcome, and exit (systemd ExecStartPre=+)")
		recDir    = fs.String("recorder-dir", "", "record every live port into this directory (turns the recorder on; docs/recorder.md)")
		sources   repeated
		// MCP surface (docs/mcp-protocol.md).
		bundles      = fs.String("mcp-bundles", "", "comma-separated tool bundles to load, or all (default: every bundle except transmit; the vehicle depth only with a CAN or J1708 port)")
		maxResp      = fs.Int("mcp-max-response-bytes", mcp.DefaultMaxResponseBytes, fmt.Sprintf("largest tool answer in bytes; a larger list page is cut to fit with its cursor, a larger single item is refused with RESPONSE_TOO_LARGE (minimum %d)", mcp.MinMaxResponseBytes))
		tokensFile   = fs.String("mcp-tokens-file", "", "bearer tokens file of id:sha256:<hex>[:scopes] lines; required to listen beyond loopback")
		resourceURL  = fs.String("mcp-resource-url", "", "publish RFC 9728 protected-resource metadata for this URL of the endpoint")
		maxConc      = fs.Int("mcp-max-concurrent", front.DefaultMaxConcurrent, "tool calls running at once over HTTP; more are refused (0: no cap)")
		ratePerPeer  = fs.Int("mcp-rate-limit-per-peer", front.DefaultRatePerPeer, "tool calls one peer address may start per second over HTTP (0: no cap)")
		auditFile    = fs.String("mcp-audit-file", "", "append one JSON line per tools/call to this file (created 0600)")
		outSchemas   = fs.Bool("mcp-output-schemas", false, "advertise every tool's output schema in tools/list (about four times the bytes)")
		allowedHosts repeated
	)
	fs.Var(&allowedHosts, "mcp-allowed-host", "Host header name accepted besides localhost (repeatable)")
	fs.Var(&sources, "source", "capture file to open as a read-only port (repeatable; kind detected from content)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fieldtapd: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *showVer {
		fmt.Fprintln(stderr, "fieldtapd", version)
		return 0
	}

	cfg := config.Default()
	if *cfgPath != "" {
		var err error
		if cfg, err = config.Load(*cfgPath); err != nil {
			fmt.Fprintln(stderr, "fieldtapd:", err)
			return 2
		}
	}
	// Flags given on the command line override the file.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "board":
			cfg.Board = *board
		case "mcp-transport":
			cfg.MCP.Transport = *transport
		case "mcp-listen":
			cfg.MCP.Listen = *listen
		case "replay-speed":
			cfg.ReplaySpeed = *speed
		case "sim-start":
			cfg.SimStart = *simStart
		case "log-level":
			cfg.Log.Level = *logLevel
		case "log-format":
			cfg.Log.Format = *logFormat
		case "mcp-bundles":
			cfg.MCP.Bundles = splitList(*bundles)
		case "mcp-max-response-bytes":
			cfg.MCP.MaxResponseBytes = *maxResp
		case "mcp-tokens-file":
			cfg.MCP.TokensFile = *tokensFile
		case "mcp-resource-url":
			cfg.MCP.ResourceURL = *resourceURL
		case "mcp-max-concurrent":
			cfg.MCP.MaxConcurrent = maxConc
		case "mcp-rate-limit-per-peer":
			cfg.MCP.RateLimitPerPeer = ratePerPeer
		case "mcp-audit-file":
			cfg.MCP.AuditFile = *auditFile
		case "mcp-output-schemas":
			cfg.MCP.OutputSchemas = *outSchemas

		case "recorder-dir":
			cfg.Recorder.Enabled, cfg.Recorder.Dir = true, *recDir
		}
	})
	cfg.Sources = append(cfg.Sources, sources...)
	cfg.MCP.AllowedHosts = append(cfg.MCP.AllowedHosts, allowedHosts...)
	// The one check: the daemon takes only a checked configuration.
	checked, err := cfg.Check()
	if err != nil {
		fmt.Fprintln(stderr, "fieldtapd: config:", err)
		return 2
	}

	log, limited := newLogger(stderr, cfg.Log)
	defer limited.Flush() // the counts of lines still being suppressed
	// The runtime's soft limit is the memory budget the stores are
	// derived from (GOMEMLIMIT in the environment wins).
	budget, _, err := cfg.Budget()
	if err != nil {
		fmt.Fprintln(stderr, "fieldtapd: config:", err)
		return 2
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(budget)
	}
	log.Info("fieldtapd starting", "version", version, "board", cfg.Board, "transport", cfg.MCP.Transport)
	if code, done := dropOrPrepare(ctx, checked, log, *runAs, *prepOnly, args); done {
		return code
	}
	err = daemon.Run(ctx, checked, version, log, daemon.IO{Stdin: stdin, Stdout: stdout})
	if err != nil {
		log.Error("fieldtapd failed", "err", err)
		return 1
	}
	return 0
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// newLogger writes to w in the configured format, with like lines past a
// burst counted instead of written (firmware/loglimit): a file of bad
// lines or a client hammering a cap must not fill stderr.
func newLogger(w io.Writer, c config.Log) (*slog.Logger, *loglimit.Handler) {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if c.Format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	limited, _ := loglimit.New(h, loglimit.Options{}) // the defaults pass their own check
	return slog.New(limited), limited
}
