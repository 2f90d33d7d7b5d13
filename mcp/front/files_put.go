package front

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"fieldtap/mcp/audit"
	"fieldtap/mcp/auth"
	"fieldtap/services/upload"
)

// Headers of the upload route (docs/mcp-protocol.md, "Uploads over
// HTTP"). The offset is tus's header name: one number, where a
// Range-style header would need parsing back.
const (
	headerDigest       = "X-Content-SHA256"
	headerUploadOffset = "Upload-Offset"
	headerUploadLength = "Upload-Length"
	// queryDigest is the digest as a query parameter, for a client that
	// cannot set a header.
	queryDigest = "sha256"
)

// putTransport is the transport the audit records for the PUT route,
// told apart from the MCP endpoint's "http".
const putTransport = "http-put"

// The MCP tools whose records the PUT route writes: the same steps, the
// same names, so one grep of the audit finds an upload by either route.
const (
	toolUploadBegin  = "upload_begin"
	toolUploadChunk  = "upload_chunk"
	toolUploadFinish = "upload_finish"
)

// maxPuts bounds the PUT requests served at once: each holds a piece
// buffer of putPieceBytes and writes flash, as a download reads it.
// One past it is answered 503 with Retry-After and audited as refused.
const maxPuts = 4

// putPieceBytes is the piece a PUT reads and writes at a time: every
// PUT at once must fit the memory budget (PutBufferBytes), and on the
// sim and qemu-virt profiles' 128 MiB the fixed reservations leave under
// 64 KiB before the open_capture slot is given up. A piece is one
// WriteAt, no sync: 8 KiB costs a 1 GiB upload ~131,000 system calls.
const putPieceBytes = 8 << 10

// PutBufferBytes is what the PUTs served at once hold in piece
// buffers; the daemon books it with the connections in the memory
// budget.
const PutBufferBytes = maxPuts * putPieceBytes

// putRetryAfter is the Retry-After of a PUT refused as busy, in seconds.
const putRetryAfter = 5

// uploadServer is the HTTP side of an upload table: PUT writes a range
// of a file, HEAD says where its upload stands. It keeps no state of its
// own; the table is the one the MCP upload tools use.
type uploadServer struct {
	t         *upload.Table
	g         *gate
	slots     chan struct{}
	downloads http.Handler // HEAD of the areas uploads do not own; nil: 404
}

// ServeUploads mounts PUT and HEAD prefix+AREA/NAME over t, AREA one of
// t's areas, behind the same Host, Origin and bearer-token checks as the
// MCP endpoint. PUT needs the transmit scope, as the upload tools do.
// Call it after ServeFiles: HEAD of another area (exports/FILE) is the
// download route's.
func (e *HTTPEndpoint) ServeUploads(prefix string, t *upload.Table) {
	s := &uploadServer{t: t, g: e.gate, slots: make(chan struct{}, maxPuts), downloads: e.downloads}
	e.mux.Handle("PUT "+prefix+"{area}/{name}", http.HandlerFunc(s.put))
	e.mux.Handle("HEAD "+prefix+"{area}/{name}", http.HandlerFunc(s.head))
}

// caller authenticates r; false means it was answered 401.
func (s *uploadServer) caller(w http.ResponseWriter, r *http.Request) (auth.Caller, bool) {
	c := auth.Caller{Transport: putTransport, Peer: peerOf(r)}
	if s.g.o.Tokens == nil {
		return c, true
	}
	tok, why := s.g.authenticate(r)
	if why != authOK {
		s.g.challenge(w, why)
		return c, false
	}
	c.TokenID, c.Scopes = tok.ID, tok.Scopes
	return c, true
}

// head answers where the upload of AREA/NAME stands: Upload-Offset and
// Upload-Length of an upload in progress (to a caller with the transmit
// scope; to any other the partial does not exist), the size of a stored
// file (Content-Length, and Upload-Offset equal to Upload-Length), 404
// when there is neither. Every answer is 200 or 404 with no body.
func (s *uploadServer) head(w http.ResponseWriter, r *http.Request) {
	area := r.PathValue("area")
	if !slices.Contains(s.t.Areas(), area) {
		if s.downloads == nil {
			http.NotFound(w, r)
			return
		}
		s.downloads.ServeHTTP(w, r)
		return
	}
	if s.g.refuseOrigin(w, r) {
		return
	}
	c, ok := s.caller(w, r)
	if !ok {
		return
	}
	name := r.PathValue("name")
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if b, open := s.t.Find(area, name); open && c.May(auth.ScopeTransmit) {
		h.Set(headerUploadOffset, strconv.FormatInt(b.Next, 10))
		h.Set(headerUploadLength, strconv.FormatInt(b.Size, 10))
		w.WriteHeader(http.StatusOK)
		return
	}
	if fi, stored := s.t.Stored(area, name); stored && c.May(auth.ScopeRead) {
		n := strconv.FormatInt(fi.Size(), 10)
		h.Set("Content-Length", n)
		h.Set(headerUploadOffset, n)
		h.Set(headerUploadLength, n)
		h.Set("Last-Modified", fi.ModTime().UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusNotFound)
}

// put writes the request's bytes into the upload of AREA/NAME: it begins
// (or resumes) the upload when the request carries the file's digest,
// finds the one in progress otherwise, writes the range in pieces of at
// most putPieceBytes, and finishes the upload when its last byte has
// arrived. Every step is audited under the MCP tool that does the same.
func (s *uploadServer) put(w http.ResponseWriter, r *http.Request) {
	if s.g.refuseOrigin(w, r) {
		return
	}
	c, ok := s.caller(w, r)
	if !ok {
		return
	}
	p := &putCall{s: s, c: c, w: w, area: r.PathValue("area"), name: r.PathValue("name"), start: time.Now()}
	digest, derr := digestOf(r)
	tool := toolUploadChunk
	if digest != "" {
		tool = toolUploadBegin
	}
	if !c.May(auth.ScopeTransmit) {
		msg := fmt.Sprintf("PUT %s needs the transmit scope, as the upload tools do; token %s has %s", r.URL.Path, c.TokenID, strings.Join(c.Scopes, ","))
		p.record(tool, audit.OutcomeRefused, p.fileArgs(), "FORBIDDEN: "+msg)
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+authRealm+`", error="insufficient_scope", scope="`+auth.ScopeTransmit+`"`)
		refuseConn(w, msg, http.StatusForbidden)
		return
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		msg := fmt.Sprintf("%d uploads are being sent at once, the most the box serves: retry later", maxPuts)
		p.record(tool, audit.OutcomeRefused, p.fileArgs(), msg)
		w.Header().Set("Retry-After", strconv.Itoa(putRetryAfter))
		refuseConn(w, msg, http.StatusServiceUnavailable)
		return
	}
	if !slices.Contains(s.t.Areas(), p.area) {
		p.fail(tool, p.fileArgs(), http.StatusNotFound, fmt.Sprintf("area %q: uploads go to %s", p.area, strings.Join(s.t.Areas(), " or ")))
		return
	}
	if derr != nil {
		p.fail(tool, p.fileArgs(), http.StatusBadRequest, derr.Error())
		return
	}
	rng, code, err := rangeOf(r)
	if err != nil {
		p.fail(tool, p.fileArgs(), code, err.Error())
		return
	}
	b, ok := p.begin(rng.total, digest)
	if !ok {
		return
	}
	if rng.first != b.Next {
		w.Header().Set(headerUploadOffset, strconv.FormatInt(b.Next, 10))
		p.fail(toolUploadChunk, chunkArgs(b.ID, rng.first, 0), http.StatusRequestedRangeNotSatisfiable,
			fmt.Sprintf("Content-Range starts at %d: the upload of %s/%s stands at %d; send the bytes from there (HEAD says where it stands)", rng.first, p.area, p.name, b.Next))
		return
	}
	next, ok := p.write(r, b.ID, rng)
	if !ok {
		return
	}
	if next < b.Size {
		w.Header().Set(headerUploadOffset, strconv.FormatInt(next, 10))
		w.Header().Set(headerUploadLength, strconv.FormatInt(b.Size, 10))
		w.WriteHeader(http.StatusNoContent)
		return
	}
	p.finish(b.ID, r.URL.Path)
}

// digestOf is the file's SHA-256 from the header or the query, "" when
// neither names it; the two naming different digests is an error. The
// table checks its form.
func digestOf(r *http.Request) (string, error) {
	h, q := r.Header.Get(headerDigest), r.URL.Query().Get(queryDigest)
	switch {
	case h != "" && q != "" && !strings.EqualFold(h, q):
		return "", fmt.Errorf("%s %q and ?%s=%q name different digests", headerDigest, h, queryDigest, q)
	case h != "":
		return h, nil
	}
	return q, nil
}

// rangeOf is the part of the file the body holds: the Content-Range, or
// without one the whole file, whose size is the Content-Length (411
// without one). With a Content-Range a Content-Length must be the
// range's length; a chunked body (a client streaming from a pipe) is read
// to the range's length and must end there.
func rangeOf(r *http.Request) (byteRange, int, error) {
	h := r.Header.Get("Content-Range")
	if h == "" && r.ContentLength < 0 {
		return byteRange{}, http.StatusLengthRequired, errors.New("Content-Length required: the body is the whole file, of its size (or send Content-Range: bytes FIRST-LAST/TOTAL)")
	}
	if h == "" {
		if r.ContentLength == 0 {
			return byteRange{}, http.StatusBadRequest, errors.New("empty body: a PUT carries the file, or with Content-Range a part of it")
		}
		return byteRange{first: 0, last: r.ContentLength - 1, total: r.ContentLength}, 0, nil
	}
	rng, err := parseContentRange(h)
	if err != nil {
		return byteRange{}, http.StatusBadRequest, err
	}
	if r.ContentLength >= 0 && rng.length() != r.ContentLength {
		return byteRange{}, http.StatusBadRequest, fmt.Errorf("Content-Length %d: the Content-Range %q holds %d bytes", r.ContentLength, h, rng.length())
	}
	return rng, 0, nil
}

// putCall is one PUT request: its caller, file and answer.
type putCall struct {
	s          *uploadServer
	c          auth.Caller
	w          http.ResponseWriter
	area, name string
	start      time.Time
}

// begin opens or resumes the upload with the digest, or without one
// finds the upload of the file in progress, which must have the total's
// size.
func (p *putCall) begin(total int64, digest string) (upload.Begun, bool) {
	if digest != "" {
		args := map[string]any{"area": p.area, "name": p.name, "size_bytes": total, "sha256": digest}
		b, err := p.s.t.Begin(p.area, p.name, total, digest)
		if err != nil {
			p.refused(toolUploadBegin, args, err)
			return b, false
		}
		return b, p.ok(toolUploadBegin, args)
	}
	b, open := p.s.t.Find(p.area, p.name)
	switch {
	case !open:
		p.fail(toolUploadChunk, p.fileArgs(), http.StatusBadRequest,
			fmt.Sprintf("no upload of %s/%s is in progress: the first request carries the file's SHA-256 (%s header or ?%s=)", p.area, p.name, headerDigest, queryDigest))
		return b, false
	case b.Size != total:
		p.fail(toolUploadChunk, chunkArgs(b.ID, 0, 0), http.StatusConflict,
			fmt.Sprintf("the upload of %s/%s in progress is of %d bytes, not the %d this request declares", p.area, p.name, b.Size, total))
		return b, false
	}
	return b, true
}

// write copies the body into the upload in pieces of at most
// putPieceBytes, each read within the gate's body deadline (renewed
// per piece, so a slow link is fine and a stalled one is cut). Bytes
// written before a failure stay: the upload resumes after them.
func (p *putCall) write(r *http.Request, id string, rng byteRange) (int64, bool) {
	rc := http.NewResponseController(p.w)
	defer rc.SetReadDeadline(time.Time{})
	buf := make([]byte, min(rng.length(), putPieceBytes))
	off, left := rng.first, rng.length()
	for left > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(p.s.g.bodyTimeout)) // unsupported only on writers that cannot time out anyway
		n, rerr := io.ReadFull(r.Body, buf[:min(left, int64(len(buf)))])
		if n > 0 {
			next, err := p.s.t.Chunk(id, off, buf[:n])
			if err != nil {
				if cause, _ := upload.CauseOf(err); cause == upload.CauseOffset {
					p.w.Header().Set(headerUploadOffset, strconv.FormatInt(next, 10))
				}
				p.refused(toolUploadChunk, chunkArgs(id, rng.first, off-rng.first), err)
				return 0, false
			}
			off, left = next, left-int64(n)
		}
		if rerr != nil && left > 0 {
			p.w.Header().Set(headerUploadOffset, strconv.FormatInt(off, 10))
			p.fail(toolUploadChunk, chunkArgs(id, rng.first, off-rng.first), http.StatusBadRequest,
				fmt.Sprintf("body ended after %d of its %d bytes (%v); the upload stands at %d: send the rest from there", off-rng.first, rng.length(), rerr, off))
			return 0, false
		}
	}
	if r.ContentLength < 0 {
		// A chunked body ends where its range does; the server bounds a
		// Content-Length body itself.
		if n, _ := r.Body.Read(buf[:1]); n > 0 {
			p.w.Header().Set(headerUploadOffset, strconv.FormatInt(off, 10))
			p.fail(toolUploadChunk, chunkArgs(id, rng.first, rng.length()), http.StatusBadRequest,
				fmt.Sprintf("body longer than its Content-Range of %d bytes: those were kept, the rest refused; the upload stands at %d", rng.length(), off))
			return 0, false
		}
	}
	return off, p.ok(toolUploadChunk, chunkArgs(id, rng.first, rng.length()))
}

// finish checks the complete upload and answers 201 with what landed.
func (p *putCall) finish(id, path string) {
	args := map[string]any{"id": id}
	d, err := p.s.t.Finish(id)
	if err != nil {
		p.refused(toolUploadFinish, args, err)
		return
	}
	if !p.ok(toolUploadFinish, args) {
		return
	}
	body, _ := json.Marshal(struct {
		Area   string `json:"area"`
		Name   string `json:"name"`
		Bytes  int64  `json:"bytes"`
		SHA256 string `json:"sha256"`
		Kind   string `json:"kind"`
	}{d.Area, d.Name, d.Bytes, d.SHA256, d.Kind})
	h := p.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Location", path)
	h.Set(headerUploadOffset, strconv.FormatInt(d.Bytes, 10))
	h.Set(headerUploadLength, strconv.FormatInt(d.Bytes, 10))
	p.w.WriteHeader(http.StatusCreated)
	p.w.Write(append(body, '\n'))
}

func (p *putCall) fileArgs() map[string]any { return map[string]any{"area": p.area, "name": p.name} }

func chunkArgs(id string, off, n int64) map[string]any {
	return map[string]any{"id": id, "offset": off, "bytes": n}
}

// statusOf is the HTTP answer to a refusal of the table, by its cause.
func statusOf(c upload.Cause) int {
	switch c {
	case upload.CauseQuota:
		return http.StatusRequestEntityTooLarge
	case upload.CauseOffset:
		return http.StatusRequestedRangeNotSatisfiable
	case upload.CauseDigest:
		return http.StatusUnprocessableEntity
	case upload.CauseContent:
		return http.StatusUnsupportedMediaType
	case upload.CauseConflict:
		return http.StatusConflict
	case upload.CauseGone:
		return http.StatusNotFound
	case upload.CauseFull:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// refused answers err of the table: a refusal by its cause, anything
// else (a disk that fails) 500.
func (p *putCall) refused(tool string, args map[string]any, err error) {
	cause, isRefusal := upload.CauseOf(err)
	if !isRefusal {
		p.record(tool, audit.OutcomeToolError, args, err.Error())
		refuseConn(p.w, err.Error(), http.StatusInternalServerError)
		return
	}
	p.fail(tool, args, statusOf(cause), err.Error())
}

// fail records a tool_error as the upload tools' UPLOAD_REFUSED and
// answers code with msg.
func (p *putCall) fail(tool string, args map[string]any, code int, msg string) {
	p.record(tool, audit.OutcomeToolError, args, "UPLOAD_REFUSED: "+msg)
	refuseConn(p.w, msg, code)
}

// ok records a step that did work; when its record cannot be written the
// request is answered 500 instead, as an MCP call is AUDIT_FAILED.
func (p *putCall) ok(tool string, args map[string]any) bool {
	if err := p.record(tool, audit.OutcomeOK, args, ""); err != nil {
		p.s.g.o.Log.Error("audit record not written; upload answer withheld", "tool", tool, "err", err)
		refuseConn(p.w, "AUDIT_FAILED: the audit record of this upload step could not be written, so its answer is withheld; tell the operator: the audit file is not writable", http.StatusInternalServerError)
		return false
	}
	return true
}

// record counts the step and writes its audit record, if there is an
// audit file. A refusal whose record is lost is still answered (its
// loss is the audit's gap), as the MCP middleware does.
func (p *putCall) record(tool, outcome string, args map[string]any, errText string) error {
	o := p.s.g.o
	o.Counts.Add(tool, outcome)
	if o.Audit == nil {
		return nil
	}
	b, _ := json.Marshal(args)
	err := o.Audit.Record(tool, "", p.c, outcome, time.Since(p.start), b, errText)
	if err != nil && outcome != audit.OutcomeOK {
		o.Log.Warn("audit record of a refused upload step not written; refusal answered", "tool", tool, "err", err)
		return nil
	}
	return err
}
