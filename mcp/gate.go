package mcp

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
)

// authRealm names the protection space in every challenge (RFC 9110
// §15.5.2 requires a challenge on every 401).
const authRealm = "fieldtap"

// loopbackHosts are always accepted in the Host header.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// gate is the HTTP front door: it runs before mcp-go sees a byte.
type gate struct {
	o     HTTPOptions
	hosts map[string]bool
	lim   *limiter
}

func newGate(o HTTPOptions) *gate {
	g := &gate{o: o, hosts: map[string]bool{}, lim: newLimiter(o.MaxConcurrent, o.RatePerPeer)}
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
// (401 with an RFC 6750 challenge), body limit, and the call caps
// (JSON-RPC -32000), then hands the request on with its Caller.
func (g *gate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.refuseOrigin(w, r) {
			return
		}
		c := Caller{Transport: "http", Peer: peerOf(r)}
		if g.o.Tokens != nil {
			tok, why := g.authenticate(r)
			if why != authOK {
				g.challenge(w, why)
				return
			}
			c.TokenID, c.Scopes = tok.ID, tok.Scopes
		}
		r = r.WithContext(withCaller(r.Context(), c))
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, fmt.Sprintf("request body over %d bytes", maxRequestBody), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "read request body", http.StatusBadRequest)
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
			// waits on a person, slot.go).
			var ctx context.Context
			ctx, release = withSlot(r.Context(), release)
			r = r.WithContext(ctx)
			defer release()
		}
		next.ServeHTTP(w, r)
	})
}

// refuseOrigin answers 403 to a Host outside the allow-list (DNS
// rebinding) or a browser Origin whose host is not allowed either.
func (g *gate) refuseOrigin(w http.ResponseWriter, r *http.Request) bool {
	if !g.hosts[hostname(r.Host)] {
		http.Error(w, "Host not allowed (see --mcp-allowed-host)", http.StatusForbidden)
		return true
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !g.hosts[strings.ToLower(u.Hostname())] {
			http.Error(w, "Origin not allowed", http.StatusForbidden)
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

func (g *gate) authenticate(r *http.Request) (Token, authResult) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return Token{}, authMissing
	}
	scheme, secret, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return Token{}, authInvalid
	}
	tok, found := g.o.Tokens.Verify(strings.TrimSpace(secret))
	if !found {
		return Token{}, authInvalid
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
	http.Error(w, "bearer token required", http.StatusUnauthorized)
}

// refuse answers a call over a cap with JSON-RPC -32000 and records it.
func (g *gate) refuse(w http.ResponseWriter, call rpcCall, c Caller, why string) {
	if g.o.Audit != nil {
		if err := g.o.Audit.Record(call.Params.Name, string(call.ID), c, OutcomeRefused, 0, call.Params.Arguments, why); err != nil && g.o.Log != nil {
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
