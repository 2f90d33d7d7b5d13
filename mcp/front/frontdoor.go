package front

import (
	"net/http"
	"slices"

	"fieldtap/mcp/auth"
)

// basicRealm names the Basic challenge a browser answers with a login
// prompt; the password it sends is the bearer token.
const basicRealm = `Basic realm="fieldtap status", charset="UTF-8"`

// Protect puts a read-only handler beside the MCP endpoint (the status
// page, /metrics) behind the same front door: the Host and Origin checks
// and, when tokens are configured, a token with the read scope. A
// browser cannot send a bearer header when it opens a page, so the token
// is also taken as the password of HTTP Basic credentials (any user
// name), and a refused request is challenged for both.
func Protect(o HTTPOptions, next http.Handler) http.Handler {
	g := newGate(o, nil) // no sessions: a page and /metrics have none
	return g.hostsOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.Tokens != nil {
			why := authMissing
			var tok auth.Token
			if _, secret, basic := r.BasicAuth(); basic {
				var found bool
				if tok, found = o.Tokens.Verify(secret); found {
					why = authOK
				} else {
					why = authInvalid
				}
			} else if r.Header.Get("Authorization") != "" {
				tok, why = g.authenticate(r)
			}
			if why == authOK && !slices.Contains(tok.Scopes, auth.ScopeRead) {
				why = authInvalid
			}
			if why != authOK {
				g.challenge(withBasic{w}, why)
				return
			}
		}
		next.ServeHTTP(w, r)
	}))
}

// withBasic adds the Basic challenge after the gate's bearer one, so a
// browser prompts and a client that speaks bearer still reads its own.
type withBasic struct{ http.ResponseWriter }

func (w withBasic) WriteHeader(code int) {
	w.Header().Add("WWW-Authenticate", basicRealm)
	w.ResponseWriter.WriteHeader(code)
}
