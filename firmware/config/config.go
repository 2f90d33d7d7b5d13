// Package config is fieldtapd's configuration: defaults, the TOML file, and
// the checks that run once at start-up. A key the program does not know is
// an error naming the key, so a typo never silently does nothing.
package config

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"fieldtap/board"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/slcan"
	"fieldtap/drivers/socketcan"
)

// Defaults.
const (
	DefaultBoard        = "sim"
	DefaultTransport    = "http"
	DefaultListen       = "127.0.0.1:8731"
	DefaultReplaySpeed  = "realtime"
	DefaultHandoffDepth = capture.DefaultHandoffDepth
	// DefaultDataDir is where an operator puts DBC files for dbc_load.
	DefaultDataDir = "/var/lib/fieldtap/data"
	// DefaultBudgetMiB is the memory budget without a board profile
	// (--board none): a 512 MiB board's share, as the sim profile states.
	DefaultBudgetMiB = 128
	// maxBudgetMiB refuses a budget no board of this kind has (64 GiB):
	// a typo in MiB, not a plan.
	maxBudgetMiB = 64 << 10
	// DefaultSilentAfter is how long a live port may deliver nothing
	// before it is shown silent. A J1939 or J1708 bus with the ignition
	// on broadcasts many times a second and a SPAN port filtered to SIP
	// on a quiet trunk still carries its OPTIONS keep-alives (commonly
	// every 30 s), so a minute of nothing means the port hears nothing,
	// not a pause; an agent looking at the last few minutes learns it.
	DefaultSilentAfter = time.Minute
	// minSilentAfter is the watchdog's look interval: a shorter allowance
	// could not be honoured.
	minSilentAfter = time.Second
	// maxSilentAfter: past a day, silence is no longer news.
	maxSilentAfter = 24 * time.Hour
)

// BoardNone runs without a board: only --source files and [[port]] tables.
const BoardNone = "none"

// Boards lists what --board accepts: the profiles embedded in board/ and
// BoardNone.
func Boards() []string { return append(board.Names(), BoardNone) }

// Config is the whole configuration.
type Config struct {
	Board       string `toml:"board"`
	ReplaySpeed string `toml:"replay_speed"`
	// SimStart fixes the sim board's first capture time (RFC 3339), so
	// two runs show byte-identical traffic; empty starts it at the clock.
	SimStart string   `toml:"sim_start"`
	Sources  []string `toml:"sources"`
	// MemoryLimitMiB is the memory budget in MiB: every store's bound is
	// derived from it and the Go runtime's soft limit is set to it. 0
	// takes the board profile's memory_budget_mib (DefaultBudgetMiB with
	// board none).
	MemoryLimitMiB int `toml:"memory_limit_mib"`
	// VXLANPorts are the UDP destination ports every Ethernet port's
	// decoder opens as VXLAN (decode.go).
	VXLANPorts []int `toml:"vxlan_ports"`
	// SIPSPorts are the TCP ports whose TLS handshakes trunk health reads
	// (decode.go).
	SIPSPorts []int        `toml:"sips_ports"`
	Ports     []board.Port `toml:"port"`
	Log       Log          `toml:"log"`
	MCP       MCP          `toml:"mcp"`
	Store     Store        `toml:"store"`
	Media     Media        `toml:"media"` // media.go
	// SIPSecurity holds the attack thresholds (sipsecurity.go).
	SIPSecurity SIPSecurity `toml:"sip_security"`
	// Transmit holds the transmit limits (transmit.go).
	Transmit Transmit `toml:"transmit"`
	// TLS names the key logs SIP over TLS is read with (tls.go).
	TLS TLS `toml:"tls"`
	// Files holds the upload quotas (files.go).
	Files Files `toml:"files"`
	// Status, HEP and MQTT are the page and the fleet exporters (fleet.go).
	Status Status `toml:"status"`
	HEP    HEP    `toml:"hep"`
	MQTT   MQTT   `toml:"mqtt"`

	// Recorder is the on-disk recorder and evidence (recorder.go).
	Recorder Recorder `toml:"recorder"`

	// RuleList is the [[rule]] tables: conditions the box watches on
	// its own (rules.go).
	RuleList []Rule `toml:"rule"`
	// DBC names the DBC files loaded at start-up (dbc.go).
	DBC DBC `toml:"dbc"`
}

// SilentAfter is p's silent_after, DefaultSilentAfter when it has none,
// or an error naming a value that is not a duration from 1s to 24h.
func SilentAfter(p board.Port) (time.Duration, error) {
	if p.SilentAfter == "" {
		return DefaultSilentAfter, nil
	}
	d, err := time.ParseDuration(p.SilentAfter)
	if err != nil || d < minSilentAfter || d > maxSilentAfter {
		return 0, fmt.Errorf("silent_after %q: want a duration from %v to %v", p.SilentAfter, minSilentAfter, maxSilentAfter)
	}
	return d, nil
}

// Drivers lists the port drivers this build can open from configuration.
var Drivers = []string{"j1708", "slcan", "socketcan", "afpacket", "hep"}

// Log configures the stderr logger.
type Log struct {
	Level  string `toml:"level"`
	Format string `toml:"format"`
}

// MCP configures the agent-facing endpoint.
type MCP struct {
	Transport string `toml:"transport"`
	Listen    string `toml:"listen"`
	// Bundles to load (mcp.ResolveBundles): empty means every compiled
	// bundle except transmit, the vehicle depth only with a CAN or J1708
	// port; "all" means every bundle.
	Bundles []string `toml:"bundles"`
	// MaxResponseBytes is the tool answer budget; 0 takes the MCP
	// server's default. The server owns its defaults and its bounds
	// (mcp.DefaultMaxResponseBytes, mcp.MinMaxResponseBytes).
	MaxResponseBytes int `toml:"max_response_bytes"`
	// OutputSchemas advertises every tool's output schema in tools/list;
	// off, tools/list is about a quarter of the bytes. Answers match
	// their schemas either way (describe_response_shape has them all).
	OutputSchemas bool `toml:"output_schemas"`
	// TokensFile holds id:sha256:<hex>[:scopes] lines; required to bind
	// anything but loopback.
	TokensFile   string   `toml:"tokens_file"`
	AllowedHosts []string `toml:"allowed_hosts"`
	ResourceURL  string   `toml:"resource_url"`
	// MaxConcurrent and RateLimitPerPeer cap tools/call over HTTP; 0
	// disables either, unset (nil) takes the MCP front door's default
	// (front.DefaultMaxConcurrent, front.DefaultRatePerPeer).
	MaxConcurrent    *int   `toml:"max_concurrent"`
	RateLimitPerPeer *int   `toml:"rate_limit_per_peer"`
	AuditFile        string `toml:"audit_file"`
	// AuditMaxBytes is the size at which the audit file is rotated to
	// AUDIT_FILE.1; 0 takes the audit's default. The audit owns the
	// default and the minimum (audit.DefaultMaxBytes, mcp/audit).
	AuditMaxBytes int64 `toml:"audit_max_bytes"`
}

// Store bounds each port's raw frame ring and its hand-off queue.
type Store struct {
	// FramesPerPort and BytesPerPort bound each Ethernet port's raw frame
	// ring; 0 derives them from the memory budget. A byte bound set here
	// is taken from the budget first, and refused if it does not fit.
	FramesPerPort int   `toml:"frames_per_port"`
	BytesPerPort  int64 `toml:"bytes_per_port"`
	HandoffDepth  int   `toml:"handoff_depth"`
	// ExportDir receives export_capture's pcapng files; empty means
	// fieldtap-export under the OS temporary directory.
	ExportDir string `toml:"export_dir"`
	// DataDir holds the files dbc_load may read (DBC databases); a name
	// that leaves it, by `..`, an absolute path or a symlink, is refused.
	DataDir string `toml:"data_dir"`
	// CaptureDir holds capture files an operator copies onto the box for
	// open_capture; names are resolved inside it, symlinks refused.
	CaptureDir string `toml:"capture_dir"`
	// OpenedCaptures is how many files open_capture may load while the
	// box runs. Each is planned at start-up as a port of every kind (its
	// kind is known only once it opens), so it costs a port's fixed
	// tables three times over: 0 reserves nothing and open_capture
	// refuses. Unset (nil), the board profile's opened_captures applies
	// (OpenedCapturesFor).
	OpenedCaptures *int `toml:"opened_captures"`
}

// MaxOpenedCaptures bounds store.opened_captures.
const MaxOpenedCaptures = 8

// Default returns the configuration used when no file is given.
func Default() Config {
	return Config{
		Board:       DefaultBoard,
		ReplaySpeed: DefaultReplaySpeed,
		VXLANPorts:  slices.Clone(DefaultVXLANPorts),
		SIPSPorts:   slices.Clone(DefaultSIPSPorts),
		Log:         Log{Level: "info", Format: "text"},
		MCP:         MCP{Transport: DefaultTransport, Listen: DefaultListen},
		Store:       Store{HandoffDepth: DefaultHandoffDepth, DataDir: DefaultDataDir, CaptureDir: DefaultCaptureDir},
		Transmit:    DefaultTransmit(),
		Media:       Media{Interval: DefaultMediaInterval},
		SIPSecurity: DefaultSIPSecurity(),
		Status:      DefaultStatus(),
		HEP:         DefaultHEP(),
		MQTT:        DefaultMQTT(),
		Recorder:    DefaultRecorder(),
		Files:       Files{MaxFileBytes: DefaultMaxFileBytes, MaxTotalBytes: DefaultMaxTotalBytes},
	}
}

// maxFileBytes bounds the configuration file: the documented example with
// every port table is a few KiB; a file past this is a wrong file.
const maxFileBytes = 1 << 20

// Load reads a TOML file over the defaults.
func Load(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Default(), fmt.Errorf("config %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return Default(), fmt.Errorf("config %s: %w", path, err)
	}
	if len(b) > maxFileBytes {
		return Default(), fmt.Errorf("config %s: over %d bytes: is it the configuration?", path, maxFileBytes)
	}
	return Parse(path, b)
}

// Parse reads TOML text over the defaults; name labels errors. A key the
// program does not know is an error naming it.
func Parse(name string, text []byte) (Config, error) {
	c := Default()
	md, err := toml.Decode(string(text), &c)
	if err != nil {
		return c, fmt.Errorf("config %s: %w", name, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return c, fmt.Errorf("config %s: unknown key %s", name, strings.Join(keys, ", "))
	}
	return c, nil
}

// Speed is the replay pace of simulated ports: a factor of real time, or 0
// for as fast as the analysers take it.
func (c Config) Speed() (float64, error) {
	switch c.ReplaySpeed {
	case "realtime", "":
		return 1, nil
	case "max":
		return 0, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(c.ReplaySpeed, "x"), 64)
	if err != nil || f <= 0 || f > 1000 {
		return 0, fmt.Errorf("replay_speed %q: want realtime, max, or a factor between 0 and 1000 such as 10x", c.ReplaySpeed)
	}
	return f, nil
}

// SimClock is the sim board's start: a fixed time when sim_start is
// set, nil (the wall clock) when not.
func (c Config) SimClock() (func() time.Time, error) {
	if c.SimStart == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, c.SimStart)
	if err != nil {
		return nil, fmt.Errorf("sim_start %q: want an RFC 3339 time such as 2026-01-01T00:00:00Z", c.SimStart)
	}
	return func() time.Time { return t }, nil
}

// Checked is a configuration that passed Validate. The daemon takes only
// a Checked, so whoever loads a configuration checks it, once, and none
// reaches the daemon unchecked. Make one with Config.Check; the zero
// Checked is not one.
type Checked struct{ c Config }

// Check validates c and returns it as Checked, or Validate's error.
func (c Config) Check() (Checked, error) {
	if err := c.Validate(); err != nil {
		return Checked{}, err
	}
	return Checked{c}, nil
}

// Config is the configuration that passed Validate.
func (c Checked) Config() Config { return c.c }

// Validate checks every value once, naming the one that is wrong.
func (c Config) Validate() error {
	var errs []error
	if !slices.Contains(Boards(), c.Board) {
		errs = append(errs, fmt.Errorf("board %q: want one of %s", c.Board, strings.Join(Boards(), ", ")))
	}
	if _, err := c.Speed(); err != nil {
		errs = append(errs, err)
	}
	if _, err := c.SimClock(); err != nil {
		errs = append(errs, err)
	}
	switch c.MCP.Transport {
	case "stdio", "http":
	default:
		errs = append(errs, fmt.Errorf("mcp.transport %q: want stdio or http", c.MCP.Transport))
	}
	errs = append(errs, c.MCP.validate()...)
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log.level %q: want debug, info, warn or error", c.Log.Level))
	}
	switch c.Log.Format {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("log.format %q: want text or json", c.Log.Format))
	}
	if c.Store.FramesPerPort < 0 || c.Store.BytesPerPort < 0 {
		errs = append(errs, fmt.Errorf("store.frames_per_port %d, store.bytes_per_port %d: want 0 (a share of the memory budget) or a positive bound",
			c.Store.FramesPerPort, c.Store.BytesPerPort))
	}
	if n := c.Store.OpenedCaptures; n != nil && (*n < 0 || *n > MaxOpenedCaptures) {
		errs = append(errs, fmt.Errorf("store.opened_captures %d: want 0 to %d", *n, MaxOpenedCaptures))
	}
	if c.Store.HandoffDepth < 1 || c.Store.HandoffDepth > 1<<20 {
		errs = append(errs, fmt.Errorf("store.handoff_depth %d: want 1 to %d", c.Store.HandoffDepth, 1<<20))
	}
	seen := map[string]bool{}
	for i, p := range c.Ports {
		switch {
		case p.Name == "":
			errs = append(errs, fmt.Errorf("port %d: no name", i+1))
		case seen[p.Name]:
			errs = append(errs, fmt.Errorf("port %q: named twice", p.Name))
		}
		seen[p.Name] = true
		if !slices.Contains(Drivers, p.Driver) {
			errs = append(errs, fmt.Errorf("port %q: driver %q: want one of %s", p.Name, p.Driver, strings.Join(Drivers, ", ")))
		}
		switch {
		case p.Driver == "hep":
			errs = append(errs, checkHEPPort(p)...)
		case p.Device == "":
			errs = append(errs, fmt.Errorf("port %q: no device", p.Name))
		default:
			errs = append(errs, notHEPKeys(p)...)
		}
		if p.GapMicros < 0 {
			errs = append(errs, fmt.Errorf("port %q: gap_us %d is negative", p.Name, p.GapMicros))
		}
		if p.EchoSlackMillis < 0 {
			errs = append(errs, fmt.Errorf("port %q: echo_slack_ms %d is negative", p.Name, p.EchoSlackMillis))
		}
		if err := checkBitrate(p); err != nil {
			errs = append(errs, fmt.Errorf("port %q: %w", p.Name, err))
		}
		if _, err := SilentAfter(p); err != nil {
			errs = append(errs, fmt.Errorf("port %q: %w", p.Name, err))
		}
	}
	errs = append(errs, c.Transmit.validate(c.Board)...)
	errs = append(errs, c.Media.validate()...)
	errs = append(errs, validateVXLANPorts(c.VXLANPorts)...)
	errs = append(errs, validateSIPSPorts(c.SIPSPorts)...)
	errs = append(errs, c.SIPSecurity.validate()...)
	errs = append(errs, c.TLS.validate()...)
	errs = append(errs, c.Files.validate()...)
	errs = append(errs, c.Status.validate(c.MCP.TokensFile != "")...)
	errs = append(errs, c.HEP.validate()...)
	errs = append(errs, c.MQTT.validate()...)
	errs = append(errs, c.Recorder.validate()...)
	if _, err := c.Rules(); err != nil {
		errs = append(errs, err)
	}
	for i, r := range c.RuleList {
		if r.SealEvidence && !c.Recorder.Enabled {
			errs = append(errs, fmt.Errorf("rule %d: seal_evidence seals recorded segments: set recorder.enabled", i+1))
		}
	}
	errs = append(errs, c.DBC.validate(c.Store.DataDir)...)
	if c.MemoryLimitMiB < 0 || c.MemoryLimitMiB > maxBudgetMiB {
		errs = append(errs, fmt.Errorf("memory_limit_mib %d: want 0 (the board profile's budget) or a size up to %d", c.MemoryLimitMiB, maxBudgetMiB))
	}
	if c.Board == BoardNone && len(c.Sources) == 0 && len(c.Ports) == 0 {
		errs = append(errs, errors.New("board none opens no board ports: give at least one source or [[port]]"))
	}
	return errors.Join(errs...)
}

// Budget is the memory budget in bytes and where it comes from:
// memory_limit_mib when set, else the board profile's memory_budget_mib,
// else DefaultBudgetMiB.
func (c Config) Budget() (int64, string, error) {
	if c.MemoryLimitMiB > 0 {
		return int64(c.MemoryLimitMiB) << 20, "memory_limit_mib", nil
	}
	if c.Board == BoardNone {
		return DefaultBudgetMiB << 20, "the default for board none", nil
	}
	p, err := board.Load(c.Board)
	if err != nil {
		return 0, "", err
	}
	if p.MemoryBudgetMiB == 0 {
		return DefaultBudgetMiB << 20, "the default (profile " + p.Name + " states none)", nil
	}
	return int64(p.MemoryBudgetMiB) << 20, "board profile " + p.Name, nil
}

// OpenedCapturesFor is how many ports the budget reserves for
// open_capture: store.opened_captures when the file sets it (explicit),
// else the board profile's opened_captures, which the daemon lowers to
// what fits beside the configured ports, else none.
func (c Config) OpenedCapturesFor() (n int, explicit bool, err error) {
	if c.Store.OpenedCaptures != nil {
		return *c.Store.OpenedCaptures, true, nil
	}
	if c.Board == BoardNone {
		return 0, false, nil
	}
	p, err := board.Load(c.Board)
	if err != nil {
		return 0, false, err
	}
	return p.OpenedCaptures, false, nil
}

// validate checks the [mcp] section. Binding anything but loopback
// without tokens is refused: the cable can reach the box from a laptop
// nobody vetted.
func (m MCP) validate() []error {
	var errs []error
	host, _, err := net.SplitHostPort(m.Listen)
	if err != nil {
		errs = append(errs, fmt.Errorf("mcp.listen %q: %w", m.Listen, err))
	} else if m.Transport == "http" && m.TokensFile == "" && !isLoopback(host) {
		errs = append(errs, fmt.Errorf("mcp.listen %q is not loopback: set mcp.tokens_file (--mcp-tokens-file) first", m.Listen))
	}
	if m.AuditMaxBytes < 0 {
		errs = append(errs, fmt.Errorf("mcp.audit_max_bytes %d: want 0 (the server's default) or a size in bytes", m.AuditMaxBytes))
	}
	if m.MaxResponseBytes < 0 {
		errs = append(errs, fmt.Errorf("mcp.max_response_bytes %d: want 0 (the server's default) or a size in bytes", m.MaxResponseBytes))
	}
	for _, v := range []struct {
		key string
		n   *int
	}{{"mcp.max_concurrent", m.MaxConcurrent}, {"mcp.rate_limit_per_peer", m.RateLimitPerPeer}} {
		if v.n != nil && *v.n < 0 {
			errs = append(errs, fmt.Errorf("%s %d: want 0 (off) or positive", v.key, *v.n))
		}
	}
	return errs
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkBitrate checks a CAN port's bitrate against what its driver can set;
// 0 takes the driver's default.
func checkBitrate(p board.Port) error {
	if p.Bitrate == 0 {
		return nil
	}
	switch p.Driver {
	case "slcan":
		_, err := slcan.BitrateCommand(p.Bitrate)
		return err
	case "socketcan":
		return socketcan.CheckBitrate(p.Bitrate)
	}
	return fmt.Errorf("bitrate %d: driver %q has no bitrate", p.Bitrate, p.Driver)
}
