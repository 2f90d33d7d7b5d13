package mcp

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// maxSessions bounds the session table; past it the oldest session is
// forgotten (its client gets 404 and initializes again).
const maxSessions = 1024

// sessionPrefix matches mcp-go's ids so logs read the same.
const sessionPrefix = "mcp-session-"

var errSession = errors.New("unknown session")

// sessions binds each HTTP session id to the token that created it:
// mcp-go's default ids are only format-checked, so any well-formed id
// would be accepted. A forged id, or another token's id, is answered
// 404 by mcp-go when Validate fails.
type sessions struct {
	mu    sync.Mutex
	owner map[string]string // session id → token id ("" without tokens)
	order []string          // creation order, for eviction
}

func newSessions() *sessions { return &sessions{owner: map[string]string{}} }

// ResolveSessionIdManager binds the manager to the caller of r.
func (s *sessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	return boundSessions{s: s, token: callerOf(r.Context()).TokenID}
}

type boundSessions struct {
	s     *sessions
	token string
}

func (b boundSessions) Generate() string {
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go 1.24+)
	id := sessionPrefix + hex.EncodeToString(raw[:])
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if len(b.s.order) >= maxSessions {
		delete(b.s.owner, b.s.order[0])
		b.s.order = b.s.order[1:]
	}
	b.s.owner[id] = b.token
	b.s.order = append(b.s.order, id)
	return id
}

func (b boundSessions) Validate(id string) (bool, error) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if owner, found := b.s.owner[id]; !found || owner != b.token {
		return false, errSession
	}
	return false, nil
}

func (b boundSessions) Terminate(id string) (bool, error) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	if owner, found := b.s.owner[id]; !found || owner != b.token {
		return false, errSession
	}
	delete(b.s.owner, id)
	for i, o := range b.s.order {
		if o == id {
			b.s.order = append(b.s.order[:i], b.s.order[i+1:]...)
			break
		}
	}
	return false, nil
}
