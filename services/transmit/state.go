package transmit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A confirmation's request state is what the MCP layer hands the client
// with the question and gets back with the answer. It names the plan and a
// nonce and carries an expiry, authenticated by an HMAC-SHA256 under a
// secret only the daemon holds, over those and what the state is bound
// to: the tool call (tool name and a digest of its arguments) and the
// owner (token and session). The client can read it but not make one, and
// one made for one call does not verify on another.
//
//	ftc1.<plan id>.<nonce hex>.<expiry, unix ms>.<mac, base64url>
const (
	stateVersion = "ftc1"
	// stateSep never occurs in a plan id, a hex nonce, a decimal or
	// base64url, and is not the ':' the MCP layer wraps states with.
	stateSep = "."
	// nonceBytes: a nonce is never reused by chance.
	nonceBytes = 16
	// macBytes is the full HMAC-SHA256.
	macBytes = sha256.Size
	// SecretBytes is the length of the daemon's confirmation secret.
	SecretBytes = 32
	// maxStateLen bounds what is parsed: a genuine state is about 110 bytes.
	maxStateLen = 256
	// macDomain separates these MACs from any other use of the secret.
	macDomain = "fieldtap transmit confirmation v1"
)

// state is a parsed request state.
type state struct {
	planID  string
	nonce   string // hex
	expires time.Time
	mac     []byte
}

// parseState splits a request state; it checks form, not authenticity.
func parseState(s string) (state, error) {
	if len(s) > maxStateLen {
		return state{}, fmt.Errorf("request state is %d bytes, longer than any this box issues (%d)", len(s), maxStateLen)
	}
	parts := strings.Split(s, stateSep)
	if len(parts) != 5 || parts[0] != stateVersion {
		return state{}, fmt.Errorf("request state is not a %s state", stateVersion)
	}
	st := state{planID: parts[1], nonce: parts[2]}
	if !strings.HasPrefix(st.planID, planPrefix) || len(st.planID) != len(planPrefix)+2*planIDBytes || !isHex(st.planID[len(planPrefix):]) {
		return state{}, fmt.Errorf("request state names no plan id")
	}
	if len(st.nonce) != 2*nonceBytes || !isHex(st.nonce) {
		return state{}, fmt.Errorf("request state has no nonce")
	}
	ms, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil || ms <= 0 {
		return state{}, fmt.Errorf("request state has no expiry")
	}
	st.expires = time.UnixMilli(ms)
	st.mac, err = base64.RawURLEncoding.DecodeString(parts[4])
	if err != nil || len(st.mac) != macBytes {
		return state{}, fmt.Errorf("request state has no MAC")
	}
	if st.String() != s {
		return state{}, fmt.Errorf("request state is not written as this box writes it")
	}
	return st, nil
}

// isHex reports whether s is lower-case hex, as newID and nonces write it.
func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// String writes the state.
func (st state) String() string {
	return strings.Join([]string{stateVersion, st.planID, st.nonce, strconv.FormatInt(st.expires.UnixMilli(), 10),
		base64.RawURLEncoding.EncodeToString(st.mac)}, stateSep)
}

// sign computes the state's MAC for sub.
func (st state) sign(secret []byte, sub Subject) []byte {
	m := hmac.New(sha256.New, secret)
	for _, f := range []string{macDomain, st.planID, sub.Tool, sub.ArgsDigest, sub.Owner.Token, sub.Owner.Session, st.nonce,
		strconv.FormatInt(st.expires.UnixMilli(), 10)} {
		// Length-prefixed, so no two field lists hash alike.
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		m.Write(n[:])
		m.Write([]byte(f))
	}
	return m.Sum(nil)
}

// verifies reports whether the state's MAC is the one for sub.
func (st state) verifies(secret []byte, sub Subject) bool {
	return hmac.Equal(st.mac, st.sign(secret, sub))
}

func newNonce() string {
	b := make([]byte, nonceBytes)
	rand.Read(b)
	return hex.EncodeToString(b)
}
