package mcp

import (
	"context"
	"io"
	"log"
	"log/slog"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
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
// answered, or stdioDrain has passed.
func ServeStdio(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer, logger *slog.Logger) error {
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(log.New(&slogWriter{logger}, "", 0))
	d := newDrain(ctx, in, out, stdioDrain)
	return stdio.Listen(ctx, d, d.out())
}

// HTTPOptions are the access rules of the HTTP endpoint (docs/mcp-protocol.md).
type HTTPOptions struct {
	// Tokens, when set, make a bearer token mandatory; nil serves loopback
	// clients without one (the daemon refuses other binds without tokens).
	Tokens *Tokens
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
	Audit *Audit
	Log   *slog.Logger
}

// HTTPHandler returns the streamable-HTTP handler mounted at Path behind
// the access checks: Host, Origin, bearer token, body size, call caps.
func HTTPHandler(s *server.MCPServer, o HTTPOptions) http.Handler {
	sess := newSessions()
	opts := []server.StreamableHTTPOption{
		server.WithEndpointPath(Path),
		server.WithStreamableHTTPLogger(o.Log),
		server.WithSessionIdManagerResolver(sess),
		// The gate checks Host on every interface against a list that
		// starts with the loopback names; mcp-go's check would refuse an
		// operator's --mcp-allowed-host on a loopback connection.
		server.WithDisableLocalhostProtection(true),
	}
	if o.ResourceURL != "" {
		opts = append(opts, server.WithProtectedResourceMetadata(resourceMetadata(o.ResourceURL)))
	}
	h := server.NewStreamableHTTPServer(s, opts...)
	g := newGate(o)
	mux := http.NewServeMux()
	mux.Handle(Path, g.wrap(http.MaxBytesHandler(h, maxRequestBody)))
	if o.ResourceURL != "" {
		// Discovery is unauthenticated by design: it names the resource,
		// its scopes and its docs, and nothing else.
		mux.Handle(server.ProtectedResourceMetadataPath(o.ResourceURL), g.hostsOnly(h))
	}
	return mux
}

// resourceMetadata names no authorization server: fieldtap issues no
// OAuth tokens, and a client sent to fetch one would return holding a
// credential this server rejects.
func resourceMetadata(url string) server.ProtectedResourceMetadataConfig {
	return server.ProtectedResourceMetadataConfig{
		Resource:               url,
		ScopesSupported:        []string{ScopeRead, ScopeTransmit},
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
