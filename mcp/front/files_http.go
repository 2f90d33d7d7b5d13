package front

import (
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"sync/atomic"

	"fieldtap/mcp/auth"
	"fieldtap/services/sandbox"
)

// maxDownloads bounds the files served at once: each streams from the
// box's flash over the USB link, and more would starve the MCP calls
// sharing it. One past it is answered 503 with Retry-After and counted.
const maxDownloads = 4

// downloadRetryAfter is the Retry-After of a download refused as busy,
// in seconds: long enough for a file of a few MiB to finish.
const downloadRetryAfter = 5

// FileServer serves sandbox files over HTTP GET behind the endpoint's
// Host, Origin and bearer-token checks, at most maxDownloads at once,
// counting what it served and refused.
type FileServer struct {
	files *sandbox.Sandbox
	slots chan struct{}

	served, bytes                            atomic.Uint64
	refusedName, notFound, busy, refusedAuth atomic.Uint64
	failed                                   atomic.Uint64
	inProgress                               atomic.Int64
}

// FileStats is what a FileServer served and refused since start, by
// cause. Its fields are mcp.FileStats's, the capture_status row the
// daemon converts it to.
type FileStats struct {
	Served  uint64 // answered 200 or 206
	Bytes   uint64 // body bytes written
	Active  int64
	Max     int    // maxDownloads
	Busy    uint64 // refused 503: Max downloads were running
	Refused uint64 // refused 403: outside the sandbox, a symbolic link, hidden, or an evidence file whose bundle no longer matches its digests
	Missing uint64 // 404
	Auth    uint64 // refused 401: no or a wrong bearer token
	Failed  uint64 // answered 500
}

// NewFileServer serves files from sb.
func NewFileServer(sb *sandbox.Sandbox) *FileServer {
	return &FileServer{files: sb, slots: make(chan struct{}, maxDownloads)}
}

// Stats returns the counters.
func (f *FileServer) Stats() FileStats {
	return FileStats{Served: f.served.Load(), Bytes: f.bytes.Load(), Active: f.inProgress.Load(), Max: maxDownloads,
		Busy: f.busy.Load(), Refused: f.refusedName.Load(), Missing: f.notFound.Load(), Auth: f.refusedAuth.Load(), Failed: f.failed.Load()}
}

// ServeFiles mounts f at prefix (mcp.FilesPath, the path the tools'
// resource links name; it ends in a slash) behind the same Host, Origin
// and bearer-token checks as the MCP endpoint: any valid token may read.
func (e *HTTPEndpoint) ServeFiles(prefix string, f *FileServer) {
	g := e.gate
	e.downloads = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.refuseOrigin(w, r) {
			return
		}
		if g.o.Tokens != nil {
			tok, why := g.authenticate(r)
			if why == authOK && !(auth.Caller{Scopes: tok.Scopes}).May(auth.ScopeRead) {
				why = authInvalid
			}
			if why != authOK {
				f.refusedAuth.Add(1)
				g.challenge(w, why)
				return
			}
		}
		f.serve(w, r, r.PathValue("name"))
	})
	e.mux.Handle("GET "+prefix+"{name...}", e.downloads)
}

func (f *FileServer) serve(w http.ResponseWriter, r *http.Request, name string) {
	select {
	case f.slots <- struct{}{}:
		defer func() { <-f.slots }()
	default:
		f.busy.Add(1)
		w.Header().Set("Retry-After", strconv.Itoa(downloadRetryAfter))
		http.Error(w, "too many downloads at once: retry later", http.StatusServiceUnavailable)
		return
	}
	f.inProgress.Add(1)
	defer f.inProgress.Add(-1)
	file, err := f.files.Open(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.notFound.Add(1)
		http.Error(w, "no such file in the sandbox", http.StatusNotFound)
		return
	case errors.Is(err, sandbox.ErrRefused):
		f.refusedName.Add(1)
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	case err != nil:
		f.failed.Add(1)
		http.Error(w, "open: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer file.Close()
	h := w.Header()
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(name)}))
	h.Set("Content-Type", sandbox.MediaType(name))
	h.Set("X-Content-Type-Options", "nosniff")
	cw := &countingWriter{ResponseWriter: w}
	// ServeContent sets Content-Length, answers Range and HEAD.
	http.ServeContent(cw, r, path.Base(name), file.Modified, file.File)
	if cw.code < 300 {
		f.served.Add(1)
	}
	f.bytes.Add(cw.n)
}

// countingWriter counts the body bytes written and keeps the status.
type countingWriter struct {
	http.ResponseWriter
	n    uint64
	code int
}

func (c *countingWriter) WriteHeader(code int) {
	c.code = code
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(p)
	c.n += uint64(n)
	return n, err
}
