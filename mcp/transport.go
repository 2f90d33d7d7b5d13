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
func ServeStdio(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer, logger *slog.Logger) error {
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(log.New(&slogWriter{logger}, "", 0))
	return stdio.Listen(ctx, in, out)
}

// HTTPHandler returns the streamable-HTTP handler mounted at Path.
func HTTPHandler(s *server.MCPServer, logger *slog.Logger) http.Handler {
	h := server.NewStreamableHTTPServer(s,
		server.WithEndpointPath(Path),
		server.WithStreamableHTTPLogger(logger),
	)
	mux := http.NewServeMux()
	mux.Handle(Path, http.MaxBytesHandler(h, maxRequestBody))
	return mux
}

// slogWriter adapts mcp-go's *log.Logger output to slog on stderr.
type slogWriter struct{ l *slog.Logger }

func (w *slogWriter) Write(p []byte) (int, error) {
	w.l.Warn("mcp stdio", "msg", string(p))
	return len(p), nil
}
