package auth

import (
	"bytes"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

// FuzzParseTokens reads anything as a tokens file: no input panics, and
// a file it accepts has unique ids, known scopes, and lines that written
// back out read the same.
func FuzzParseTokens(f *testing.F) {
	f.Add([]byte("# ci tokens\n" + HashToken("ci reader", secretRead) + "\n" + HashToken("other", secretOther, ScopeRead, ScopeTransmit) + "\n"))
	f.Add([]byte("a:s3cret\n"))
	f.Add([]byte("a:sha256:abcd\n"))
	f.Add([]byte(HashToken("a", "s", "admin")))
	f.Add([]byte("\n\n#\n" + HashToken("x:y", "s") + "\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tok, err := ParseTokens(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out strings.Builder
		seen := map[string]bool{}
		for _, k := range tok.list {
			if k.ID == "" || seen[k.ID] || len(k.Scopes) == 0 {
				t.Fatalf("accepted token %+v (ids so far %v)", k, seen)
			}
			seen[k.ID] = true
			for _, s := range k.Scopes {
				if s != ScopeRead && s != ScopeTransmit {
					t.Fatalf("accepted scope %q", s)
				}
			}
			out.WriteString(k.ID + ":" + tokenHashPrefix + hex.EncodeToString(k.hash[:]) + ":" + strings.Join(k.Scopes, ",") + "\n")
		}
		back, err := ParseTokens(strings.NewReader(out.String()))
		if err != nil || !slices.EqualFunc(back.list, tok.list, func(a, b Token) bool {
			return a.ID == b.ID && a.hash == b.hash && slices.Equal(a.Scopes, b.Scopes)
		}) {
			t.Fatalf("written back, the file reads %v, %v", back, err)
		}
	})
}
