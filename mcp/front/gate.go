package front

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp/answerjson"
	"fieldtap/mcp/audit"
	"fieldtap/mcp/auth"
	"fieldtap/mcp/callslot"
)

// authRealm names the protection space in every challenge (RFC 9110
// §15.5.2 requires a challenge on every 401).
const authRealm = "fieldtap"

// Per-request time bounds. The server has no ReadTimeout or WriteTimeout:
// either would also cut an event stream or a long call (await_condition
// runs 60 s) that is carrying traffic. Instead the body has its own read
// deadline, and each write its own deadline, renewed by the next write.
const (
	// bodyReadTimeout bounds reading one request body: maxRequestBody
	// crosses a USB gadget link in well under a second, so a body still
	// arriving after this is a client holding the connection.
	bodyReadTimeout = 10 * time.Second
	// writeStall bounds one write: a client that stops reading its answer
	// or its event stream frees its connection after this.
	writeStall = 30 * time.Second
)

// loopbackHosts are always accepted in the Host header.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// gate is the HTTP front door: it runs before mcp-go sees a byte.
type gate struct {
	o     HTTPOptions
	hosts map[string]bool
	lim   *limiter
	sess  *sessions
	// bodyTimeout is bodyReadTimeout; a test shortens it.
	bodyTimeout time.Duration
	// streams ends every open event stream (GET) when cancelled: at
	// shutdown they carry no call and would hold the drain for nothing.
	streams     context.Context
	stopStreams context.CancelFunc
}

func newGate(o HTTPOptions, sess *sessions) *gate {
	g := &gate{o: o, hosts: map[string]bool{}, lim: newLimiter(o.MaxConcurrent, o.RatePerPeer), sess: sess, bodyTimeout: bodyReadTimeout}
	g.streams, g.stopStreams = context.WithCancel(context.Background())
	for _, h := range append(append([]string{}, loopbackHosts...), o.AllowedHosts...) {
		g.hosts[strings.ToLower(strings.Trim(h, "[]"))] = true
	}
	return g
}

// hostsOnly applies the Host and Origin checks alone.
func (g *gate) hostsOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.refuseOrigin(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// wrap applies, in order: Host allow-list and Origin (403), bearer token
// (401 with an RFC 6750 challenge), the session an event stream or a
// DELETE needs (400 without one, 404 for another's), the body's size and
// read deadline, and the call caps (JSON-RPC -32000), then hands the
// request on with its Caller, every write bounded by writeStall.
func (g *gate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w = &stallWriter{ResponseWriter: w, rc: http.NewResponseController(w)}
		if g.refuseOrigin(w, r) {
			return
		}
		c := auth.Caller{Transport: "http", Peer: peerOf(r)}
		if g.o.Tokens != nil {
			tok, why := g.authenticate(r)
			if why != authOK {
				g.challenge(w, why)
				return
			}
			c.TokenID, c.Scopes = tok.ID, tok.Scopes
		}
		r = r.WithContext(auth.WithCaller(r.Context(), c))
		switch r.Method {
		case http.MethodGet:
			g.stream(next, w, r)
			return
		case http.MethodDelete:
			if r.Header.Get(server.HeaderKeySessionID) == "" {
				http.Error(w, "DELETE ends a session: send its "+server.HeaderKeySessionID+" header", http.StatusBadRequest)
				return
			}
		}
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := g.readBody(w, r)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				refuseConn(w, fmt.Sprintf("request body over %d bytes", maxRequestBody), http.StatusRequestEntityTooLarge)
				return
			}
			refuseConn(w, "read request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if call, isCall := toolsCall(body); isCall {
			release, refusal := g.lim.admit(c.Peer)
			if refusal != "" {
				g.refuse(w, call, c, refusal)
				return
			}
			// The run may give the slot back early (a confirmation that
			// waits on a person, mcp/callslot).
			var ctx context.Context
			ctx, release = callslot.With(r.Context(), release)
			ctx, w = answerjson.Splice(ctx, w)
			r = r.WithContext(ctx)
			defer release()
		}
		next.ServeHTTP(w, r)
	})
}

// readBody reads the whole body within bodyReadTimeout, then lifts the
// deadline again so the call itself may take as long as it needs.
func (g *gate) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(g.bodyTimeout)) // unsupported only on writers that cannot time out anyway
	defer rc.SetReadDeadline(time.Time{})
	return io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
}

// stream admits an event stream (GET) only for a session its caller
// owns, answered at once otherwise: mcp-go would open a stream for a
// missing or unknown id and hold the request forever. The stream ends
// when the client leaves or the server stops.
func (g *gate) stream(next http.Handler, w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(server.HeaderKeySessionID)
	switch {
	case g.streams.Err() != nil:
		refuseConn(w, "the server is shutting down", http.StatusServiceUnavailable)
		return
	case mcpgo.IsModernProtocol(r.Header.Get(mcpgo.HeaderProtocolVersion)):
		// mcp-go answers 405 at once: protocol 2026-07-28 has no GET stream.
	case id == "":
		http.Error(w, "GET opens a session's event stream: initialize with a POST first and send its "+server.HeaderKeySessionID+" header", http.StatusBadRequest)
		return
	case !g.sess.valid(id, auth.CallerOf(r.Context()).TokenID):
		http.Error(w, "unknown session: initialize again", http.StatusNotFound)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(g.streams, cancel)
	defer stop()
	next.ServeHTTP(w, r.WithContext(ctx))
}

// refuseConn answers code with msg and closes the connection after it: a
// client turned away at the door keeps no descriptor open.
func refuseConn(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
}

// stallWriter renews the connection's write deadline before every write
// and flush: a stream that carries traffic is never cut, a client that
// stops reading is cut after writeStall.
type stallWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (s *stallWriter) Write(p []byte) (int, error) {
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeStall))
	return s.ResponseWriter.Write(p)
}

func (s *stallWriter) Flush() {
	_ = s.rc.SetWriteDeadline(time.Now().Add(writeStall))
	_ = s.rc.Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (s *stallWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// refuseOrigin answers 403 to a Host outside the allow-list (DNS
// rebinding) or a browser Origin whose host is not allowed either.
func (g *gate) refuseOrigin(w http.ResponseWriter, r *http.Request) bool {
	if !g.hosts[hostname(r.Host)] {
		refuseConn(w, "Host not allowed (see --mcp-allowed-host)", http.StatusForbidden)
		return true
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !g.hosts[strings.ToLower(u.Hostname())] {
			refuseConn(w, "Origin not allowed", http.StatusForbidden)
			return true
		}
	}
	return false
}

type authResult int

const (
	authOK authResult = iota
	authMissing
	authInvalid
)

func (g *gate) authenticate(r *http.Request) (auth.Token, authResult) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return auth.Token{}, authMissing
	}
	scheme, secret, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return auth.Token{}, authInvalid
	}
	tok, found := g.o.Tokens.Verify(strings.TrimSpace(secret))
	if !found {
		return auth.Token{}, authInvalid
	}
	return tok, authOK
}

// challenge answers 401. Every rejected credential gets the same
// error="invalid_token" (telling expired from forged would make the
// header an oracle); no credential gets no error code (RFC 6750 §3.1), so
// a misconfigured client is told apart from a wrong token.
func (g *gate) challenge(w http.ResponseWriter, why authResult) {
	v := `Bearer realm="` + authRealm + `"`
	if why == authInvalid {
		v += `, error="invalid_token"`
	}
	if g.o.ResourceURL != "" {
		if u, err := url.Parse(g.o.ResourceURL); err == nil {
			u.Path = server.ProtectedResourceMetadataPath(g.o.ResourceURL)
			v += `, resource_metadata="` + u.String() + `"`
		}
	}
	w.Header().Set("WWW-Authenticate", v)
	refuseConn(w, "bearer token required", http.StatusUnauthorized)
}

// refuse answers a call over a cap with JSON-RPC -32000 and records it.
func (g *gate) refuse(w http.ResponseWriter, call rpcCall, c auth.Caller, why string) {
	g.o.Counts.Add(call.Params.Name, audit.OutcomeRefused)
	if g.o.Audit != nil {
		if err := g.o.Audit.Record(call.Params.Name, string(call.ID), c, audit.OutcomeRefused, 0, call.Params.Arguments, why); err != nil && g.o.Log != nil {
			g.o.Log.Error("audit record not written", "tool", call.Params.Name, "err", err)
		}
	}
	id := call.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{mcpgo.JSONRPC_VERSION, id, rpcError{Code: CodeBusy, Message: why, Data: map[string]int64{"retry_after_ms": rateRefusedRetryAfter.Milliseconds()}}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", strconv.Itoa(int(rateRefusedRetryAfter/time.Second)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// rpcCall is the part of a JSON-RPC request the gate reads.
type rpcCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

// toolsCall reports whether body is one tools/call request.
func toolsCall(body []byte) (rpcCall, bool) {
	var c rpcCall
	if err := json.Unmarshal(body, &c); err != nil {
		return c, false
	}
	return c, c.Method == string(mcpgo.MethodToolsCall)
}

// peerOf is the remote address without its port: the address, not the
// socket, so reconnecting mints no fresh allowance.
func peerOf(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		hostport = h
	}
	return strings.ToLower(strings.Trim(hostport, "[]"))
}
