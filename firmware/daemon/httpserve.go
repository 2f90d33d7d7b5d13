package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"fieldtap/mcp/front"
)

// HTTP server bounds. There is no ReadTimeout or WriteTimeout: either
// would cut an event stream or a long call that carries traffic. The
// endpoint bounds the body's read and each write itself (mcp/front/gate.go).
const (
	// readHeaderTimeout bounds a request's headers: a client that sends
	// them slower than this holds a connection for nothing.
	readHeaderTimeout = 10 * time.Second
	// idleTimeout closes a keep-alive connection nobody uses; an agent
	// polling every few seconds keeps its own.
	idleTimeout = 30 * time.Second
	// maxHeaderBytes bounds a request's headers: a bearer token, a session
	// id and the usual few need a few KiB.
	maxHeaderBytes = 64 << 10
	// cancelGrace is how long calls get to return once cancelled, after
	// front.ShutdownDrain; a call still running then loses its connection.
	cancelGrace = 5 * time.Second
)

// serveHTTP serves e on ln until ctx ends, then drains it (drainHTTP).
func serveHTTP(ctx context.Context, ln net.Listener, e *front.HTTPEndpoint, conns *front.ConnPool, log *slog.Logger, listening func(string)) error {
	// Every request's context derives from calls, so cancelling it
	// reaches every call in flight at once.
	calls, cancelCalls := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelCalls()
	hs := &http.Server{
		Handler:           e,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return calls },
		ConnState:         conns.ConnState,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	url := "http://" + ln.Addr().String() + front.Path
	log.Info("serving MCP over HTTP", "url", url)
	if listening != nil {
		listening(ln.Addr().String())
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(conns.Listener(ln)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	drainHTTP(hs, e, cancelCalls, log)
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// drainHTTP stops hs in steps: event streams end at once (they carry no
// call); calls in flight get front.ShutdownDrain to answer; those still
// running are cancelled (the audit records them cancelled) and get
// cancelGrace to return; whatever is left loses its connection. The
// endpoint's sessions are forgotten last.
func drainHTTP(hs *http.Server, e *front.HTTPEndpoint, cancelCalls context.CancelFunc, log *slog.Logger) {
	e.StopStreams()
	if err := shutdownWithin(hs, front.ShutdownDrain); err != nil {
		log.Warn("calls still running after the shutdown drain; cancelling them", "drain", front.ShutdownDrain)
		cancelCalls()
		if err := shutdownWithin(hs, cancelGrace); err != nil {
			log.Error("calls ignored their cancellation; closing their connections", "grace", cancelGrace)
			hs.Close()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	if err := e.Close(ctx); err != nil {
		log.Warn("MCP sessions not all closed", "err", err)
	}
}

// shutdownWithin runs hs.Shutdown for at most d. Shutdown may be called
// again after it timed out: it keeps waiting for the same connections.
func shutdownWithin(hs *http.Server, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return hs.Shutdown(ctx)
}
