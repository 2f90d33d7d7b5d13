package front

import (
	"context"
	"io"
	"log"
	"log/slog"
	"net/http"

	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp/audit"
	"fieldtap/mcp/auth"
)

// Path is where the streamable-HTTP endpoint answers.
const Path = "/mcp"

// maxRequestBody bounds one HTTP request; mcp-go reads bodies without a
// limit, and no tool argument needs more than this.
const maxRequestBody = 4 << 20

// ServeStdio serves one client on in/out until in ends or ctx is done.
// Protocol errors go to log, never to out.
//
// A client may write its requests and close stdin at once (a script piping
// a file). mcp-go cancels every queued call when its input ends, so the
// input is wrapped to hold back EOF until each request read has been
// answered, or stdioDrain has passed. When ctx ends (a shutdown) no new
// request is read and the calls in flight get ShutdownDrain to answer;
// then mcp-go cancels the rest, waits for them, and ServeStdio returns.
// tools/call answers are written by stdioCalls, the rest by mcp-go.
func ServeStdio(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer, logger *slog.Logger) error {
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(log.New(&slogWriter{logger}, "", 0))
	d := newDrain(ctx, in, out, stdioDrain)
	calls := newStdioCalls(s, d, logger)
	d.take = calls.take
	stdio.SetContextFunc(calls.session)
	// The drain ends the input; mcp-go must not cancel the calls before.
	err := stdio.Listen(context.WithoutCancel(ctx), d, d.out())
	calls.close()
	return err
}

// HTTPOptions are the access rules of the HTTP endpoint (docs/mcp-protocol.md).
type HTTPOptions struct {
	// Tokens, when set, make a bearer token mandatory; nil serves loopback
	// clients without one (the daemon refuses other binds without tokens).
	Tokens *auth.Tokens
	// AllowedHosts are Host header names accepted besides the loopback
	// names: the DNS-rebinding check runs on every interface.
	AllowedHosts []string
	// ResourceURL, when set, publishes RFC 9728 metadata for it.
	ResourceURL string
	// MaxConcurrent and RatePerPeer cap tools/call; 0 disables either.
	MaxConcurrent int
	RatePerPeer   int
	// Audit records calls the limits refuse (the tool middleware records
	// the rest).
	Audit *audit.Log
	// Counts counts calls the limits refuse, as mcp.Options.Counts counts
	// the rest.
	Counts *audit.CallCounts
	Log    *slog.Logger
}

// HTTPEndpoint is the streamable-HTTP endpoint mounted at Path behind
// the access checks (Host, Origin, bearer token, session, body size and
// time, call caps), with the session table that bounds mcp-go's.
type HTTPEndpoint struct {
	mux  *http.ServeMux
	gate *gate
	sess *sessions
	h    *server.StreamableHTTPServer
	// downloads is the GET route of ServeFiles, which the upload route's
	// HEAD hands the areas it does not own.
	downloads http.Handler
}

// NewHTTPEndpoint builds the endpoint. Its sessions are bounded in number
// (maxSessions, maxSessionsPerToken) and idle time (sessionIdleTTL) in
// fieldtap's table and in mcp-go's together; Close stops mcp-go's idle
// sweeper.
func NewHTTPEndpoint(s *server.MCPServer, o HTTPOptions) *HTTPEndpoint {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	e := &HTTPEndpoint{}
	e.sess = newSessions(func(id string) {
		tellMCPGo(e.h)(id)
		st := e.stats()
		o.Log.Warn("MCP session evicted: over the session bound", "max", maxSessions, "per_token", maxSessionsPerToken, "open", st.SessionsOpen, "evicted_since_start", st.SessionsEvicted)
	})
	opts := []server.StreamableHTTPOption{
		server.WithEndpointPath(Path),
		server.WithStreamableHTTPLogger(o.Log),
		server.WithSessionIdManagerResolver(e.sess),
		server.WithSessionIdleTTL(sessionIdleTTL),
		server.WithHeartbeatInterval(streamHeartbeat),
		// The gate checks Host on every interface against a list that
		// starts with the loopback names; mcp-go's check would refuse an
		// operator's --mcp-allowed-host on a loopback connection.
		server.WithDisableLocalhostProtection(true),
	}
	if o.ResourceURL != "" {
		opts = append(opts, server.WithProtectedResourceMetadata(resourceMetadata(o.ResourceURL)))
	}
	e.h = server.NewStreamableHTTPServer(s, opts...)
	e.gate = newGate(o, e.sess)
	e.mux = http.NewServeMux()
	e.mux.Handle(Path, e.gate.wrap(http.MaxBytesHandler(e.h, maxRequestBody)))
	if o.ResourceURL != "" {
		// Discovery is unauthenticated by design: it names the resource,
		// its scopes and its docs, and nothing else.
		e.mux.Handle(server.ProtectedResourceMetadataPath(o.ResourceURL), e.gate.hostsOnly(e.h))
	}
	return e
}

func (e *HTTPEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// StopStreams ends every open event stream and refuses new ones: the
// first step of a shutdown, so that only calls hold the drain.
func (e *HTTPEndpoint) StopStreams() { e.gate.stopStreams() }

// Close stops mcp-go's idle sweeper and forgets every session; call it
// once the HTTP server has stopped.
func (e *HTTPEndpoint) Close(ctx context.Context) error {
	e.gate.stopStreams()
	return e.h.Shutdown(ctx)
}

// frontDoorStats is what the HTTP front door holds and has turned away
// since start: bounds hit are counted, not silent.
type frontDoorStats struct {
	SessionsOpen int
	// SessionsEvicted were forgotten for a bound (maxSessions or a
	// token's share), in both tables; idle ones swept are not counted.
	SessionsEvicted uint64
	// CallsRefused is tools/call refused by the rate limit or the
	// concurrency cap (each also answered -32000 and audited).
	CallsRefused uint64
}

// stats returns the front door's counters.
func (e *HTTPEndpoint) stats() frontDoorStats {
	open, evicted := e.sess.Stats()
	return frontDoorStats{SessionsOpen: open, SessionsEvicted: evicted, CallsRefused: e.gate.lim.refused.Load()}
}

var _ http.Handler = (*HTTPEndpoint)(nil)

// resourceMetadata names no authorization server: fieldtap issues no
// OAuth tokens, and a client sent to fetch one would return holding a
// credential this server rejects.
func resourceMetadata(url string) server.ProtectedResourceMetadataConfig {
	return server.ProtectedResourceMetadataConfig{
		Resource:               url,
		ScopesSupported:        []string{auth.ScopeRead, auth.ScopeTransmit},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "fieldtap capture box",
	}
}

// slogWriter adapts mcp-go's *log.Logger output to slog on stderr.
type slogWriter struct{ l *slog.Logger }

func (w *slogWriter) Write(p []byte) (int, error) {
	w.l.Warn("mcp stdio", "msg", string(p))
	return len(p), nil
}
