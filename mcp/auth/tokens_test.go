package auth

import (
	"strings"
	"testing"
)

const (
	secretRead  = "read-secret-0123456789abcdef"
	secretOther = "other-secret-0123456789abcdef"
)

func testTokens(t *testing.T) *Tokens {
	t.Helper()
	tok, err := ParseTokens(strings.NewReader("# ci tokens\n" + HashToken("ci reader", secretRead) + "\n" + HashToken("other", secretOther, ScopeRead, ScopeTransmit) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestTokensFile(t *testing.T) {
	cases := []struct {
		name string
		file string
		ok   bool
	}{
		{name: "hash line", file: HashToken("a", "s"), ok: true},
		{name: "scopes", file: HashToken("a", "s", ScopeRead, ScopeTransmit), ok: true},
		{name: "plaintext secret refused", file: "a:s3cret", ok: false},
		{name: "short hash", file: "a:sha256:abcd", ok: false},
		{name: "unknown scope", file: HashToken("a", "s", "admin"), ok: false},
		{name: "duplicate id", file: HashToken("a", "s") + "\n" + HashToken("a", "t"), ok: false},
		{name: "empty", file: "# nothing\n", ok: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTokens(strings.NewReader(tc.file))
			if (err == nil) != tc.ok {
				t.Errorf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	tok := testTokens(t)
	if got, found := tok.Verify(secretRead); !found || got.ID != "ci reader" || !(Caller{Scopes: got.Scopes}).May(ScopeRead) || (Caller{Scopes: got.Scopes}).May(ScopeTransmit) {
		t.Errorf("Verify(read secret) = %+v %v", got, found)
	}
	if _, found := tok.Verify(secretRead + "x"); found {
		t.Error("a wrong secret verified")
	}
}
