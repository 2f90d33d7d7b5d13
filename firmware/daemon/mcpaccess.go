package daemon

import (
	"log/slog"
	"net"

	"fieldtap/firmware/config"
	"fieldtap/mcp"
	"fieldtap/mcp/audit"
	"fieldtap/mcp/auth"
	"fieldtap/mcp/front"
)

// mcpAccess is what the MCP endpoint opens from files at startup.
type mcpAccess struct {
	tokens *auth.Tokens
	audit  *audit.Log
	counts *audit.CallCounts // tools/call by tool and outcome, for /metrics
}

// openMCPAccess loads the tokens file and opens the audit file; either
// failing stops startup.
func openMCPAccess(c config.MCP) (mcpAccess, error) {
	a := mcpAccess{counts: audit.NewCallCounts()}
	var err error
	if c.TokensFile != "" {
		if a.tokens, err = auth.LoadTokens(c.TokensFile); err != nil {
			return a, err
		}
	}
	if c.AuditFile != "" {
		if a.audit, err = audit.Open(c.AuditFile, audit.Limits{MaxBytes: c.AuditMaxBytes}); err != nil {
			return a, err
		}
	}
	return a, nil
}

// close closes the audit file, if one is open.
func (a mcpAccess) close() error {
	if a.audit == nil {
		return nil
	}
	return a.audit.Close()
}

// orDefault is a configured cap, or the MCP front door's default when the
// operator left it unset (0 is a choice: no cap).
func orDefault(n *int, def int) int {
	if n == nil {
		return def
	}
	return *n
}

// httpOptions accepts the configured hosts plus the listen host itself,
// so a client that dials the address it was given is never refused.
func (a mcpAccess) httpOptions(c config.MCP, log *slog.Logger) front.HTTPOptions {
	hosts := append([]string{}, c.AllowedHosts...)
	if h, _, err := net.SplitHostPort(c.Listen); err == nil && h != "" && !net.ParseIP(h).IsUnspecified() {
		hosts = append(hosts, h)
	}
	return front.HTTPOptions{
		Tokens:        a.tokens,
		AllowedHosts:  hosts,
		ResourceURL:   c.ResourceURL,
		MaxConcurrent: orDefault(c.MaxConcurrent, front.DefaultMaxConcurrent),
		RatePerPeer:   orDefault(c.RateLimitPerPeer, front.DefaultRatePerPeer),
		Audit:         a.audit,
		Counts:        a.counts,
		Log:           log,
	}
}

// downloadCounts is the front door's file server as capture_status reads
// it: mcp/front never imports mcp, so its counters are converted here
// (the two structs have the same fields, which this conversion checks).
type downloadCounts struct{ f *front.FileServer }

func (d downloadCounts) Stats() mcp.FileStats { return mcp.FileStats(d.f.Stats()) }
