package auth

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Scopes a token may carry. read calls read-only tools; transmit also
// calls tools that can put bytes on a bus (they keep every other gate).
const (
	ScopeRead     = "read"
	ScopeTransmit = "transmit"
)

// tokenHashPrefix names the hashing scheme in the tokens file: the token
// is a high-entropy random secret, so one SHA-256 is enough (a slow KDF
// protects low-entropy passwords, which tokens are not).
const tokenHashPrefix = "sha256:"

// Token is one line of the tokens file: id:sha256:<hex>[:scope,scope].
type Token struct {
	ID     string
	hash   [sha256.Size]byte
	Scopes []string
}

// Tokens verifies bearer tokens. The zero value (no file) admits nobody
// and is only used on loopback, where tokens are optional.
type Tokens struct{ list []Token }

// LoadTokens reads a tokens file. A malformed line, a duplicate id or an
// unknown scope stops startup, naming the line.
func LoadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mcp tokens: %w", err)
	}
	defer f.Close()
	t, err := ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("mcp tokens %s: %w", path, err)
	}
	return t, nil
}

// ParseTokens reads id:sha256:<64 hex>[:scopes] lines; blank lines and
// lines starting with # are skipped. Scopes default to read.
func ParseTokens(r io.Reader) (*Tokens, error) {
	var t Tokens
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tok, err := parseTokenLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if slices.ContainsFunc(t.list, func(o Token) bool { return o.ID == tok.ID }) {
			return nil, fmt.Errorf("line %d: id %q used twice", n, tok.ID)
		}
		t.list = append(t.list, tok)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.list) == 0 {
		return nil, fmt.Errorf("no tokens")
	}
	return &t, nil
}

func parseTokenLine(line string) (Token, error) {
	id, rest, found := strings.Cut(line, ":")
	if !found || id == "" {
		return Token{}, fmt.Errorf("want id:sha256:<hex>[:scopes]")
	}
	if !strings.HasPrefix(rest, tokenHashPrefix) {
		return Token{}, fmt.Errorf("token %q: hash must start with %q (a plaintext secret is never accepted)", id, tokenHashPrefix)
	}
	hexHash, scopes, _ := strings.Cut(strings.TrimPrefix(rest, tokenHashPrefix), ":")
	tok := Token{ID: id, Scopes: []string{ScopeRead}}
	b, err := hex.DecodeString(hexHash)
	if err != nil || len(b) != sha256.Size {
		return Token{}, fmt.Errorf("token %q: hash is not 64 hex digits", id)
	}
	copy(tok.hash[:], b)
	if scopes != "" {
		tok.Scopes = nil
		for _, s := range strings.Split(scopes, ",") {
			if s != ScopeRead && s != ScopeTransmit {
				return Token{}, fmt.Errorf("token %q: unknown scope %q (want read, transmit)", id, s)
			}
			tok.Scopes = append(tok.Scopes, s)
		}
	}
	return tok, nil
}

// HashToken is the line a tokens file holds for a secret.
func HashToken(id, secret string, scopes ...string) string {
	h := sha256.Sum256([]byte(secret))
	line := id + ":" + tokenHashPrefix + hex.EncodeToString(h[:])
	if len(scopes) > 0 {
		line += ":" + strings.Join(scopes, ",")
	}
	return line
}

// Verify finds the token whose hash matches secret. Every entry is
// compared, in constant time, so timing tells nothing about which ids
// exist or how close a guess came.
func (t *Tokens) Verify(secret string) (Token, bool) {
	if t == nil {
		return Token{}, false
	}
	h := sha256.Sum256([]byte(secret))
	var found Token
	hit := 0
	for _, tok := range t.list {
		if subtle.ConstantTimeCompare(h[:], tok.hash[:]) == 1 {
			found, hit = tok, 1
		}
	}
	return found, hit == 1
}
