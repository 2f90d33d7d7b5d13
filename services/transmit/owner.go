package transmit

import (
	"crypto/sha256"
	"encoding/hex"
)

// Owner is who a plan and its confirmations belong to: the id of the
// bearer token that made it and, over HTTP, the MCP session. The MCP layer
// fills it from the authenticated caller (Caller.TokenID and
// Caller.Session); over stdio both are usually empty, because one client
// owns the pipe. Another owner can neither list, read, run nor evict the
// plan, nor answer its confirmation.
type Owner struct {
	Token   string
	Session string
}

// Owner is the caller as an owner.
func (c Caller) Owner() Owner { return Owner{Token: c.TokenID, Session: c.Session} }

// sessionDigestLen is how many hex digits of a session id's SHA-256 the
// audit keeps: enough to tell sessions apart, not enough to be the id.
const sessionDigestLen = 12

// sessionDigest names a session in the audit without writing the id
// itself, which may be a credential where the HTTP layer binds it.
func sessionDigest(session string) string {
	if session == "" {
		return ""
	}
	h := sha256.Sum256([]byte(session))
	return hex.EncodeToString(h[:])[:sessionDigestLen]
}
