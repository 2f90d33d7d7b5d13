package front

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"fieldtap/mcp/auth"
)

func TestProtect(t *testing.T) {
	toks, err := auth.ParseTokens(strings.NewReader(auth.HashToken("tech", "s3cret") + "\n" + auth.HashToken("tx", "txonly", auth.ScopeTransmit) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page")) })
	tests := []struct {
		name      string
		tokens    *auth.Tokens
		host      string
		auth      func(r *http.Request)
		code      int
		challenge []string
	}{
		{name: "no tokens configured: loopback reads", host: "127.0.0.1:8732", code: 200},
		{name: "foreign Host refused", host: "evil.example:8732", code: 403},
		{name: "no credential: both challenges", tokens: toks, host: "localhost", code: 401, challenge: []string{`Bearer realm="fieldtap"`, "Basic realm="}},
		{name: "bearer token", tokens: toks, host: "localhost", auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }, code: 200},
		{name: "token as Basic password", tokens: toks, host: "localhost", auth: func(r *http.Request) { r.SetBasicAuth("anyone", "s3cret") }, code: 200},
		{name: "wrong Basic password", tokens: toks, host: "localhost", auth: func(r *http.Request) { r.SetBasicAuth("tech", "guess") }, code: 401, challenge: []string{`error="invalid_token"`}},
		{name: "token without read scope", tokens: toks, host: "localhost", auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer txonly") }, code: 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := Protect(HTTPOptions{Tokens: tc.tokens}, ok)
			r := httptest.NewRequest("GET", "/status", nil)
			r.Host = tc.host
			if tc.auth != nil {
				tc.auth(r)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if rec.Code != tc.code {
				t.Fatalf("code %d, want %d (%s)", rec.Code, tc.code, rec.Body.String())
			}
			got := strings.Join(rec.Header().Values("WWW-Authenticate"), " | ")
			for _, c := range tc.challenge {
				if !strings.Contains(got, c) {
					t.Errorf("challenges %q lack %q", got, c)
				}
			}
			if tc.code == 200 && rec.Body.String() != "page" {
				t.Errorf("body %q", rec.Body.String())
			}
		})
	}
}
