package front

import (
	clist "container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp/auth"
)

// Session bounds. mcp-go keeps about 10 KB per session (its channels and
// maps) until it is told the session is gone, so every session this
// table forgets is forgotten by mcp-go in the same step (evict), and the
// table is the bound for both.
const (
	// maxSessions bounds the table: ~10 MB of mcp-go state at most, on a
	// box whose clients are a handful of agents.
	maxSessions = 1024
	// maxSessionsPerToken bounds one token's share, so one token holder
	// initializing in a loop evicts its own sessions, never another
	// token's. Without a tokens file every caller shares the "" owner.
	maxSessionsPerToken = maxSessions / 4
	// sessionIdleTTL is how long a session may go unused (no request and
	// nothing written on its event stream) before mcp-go's sweeper
	// forgets it in both tables; its client then gets 404 and
	// initializes again, as the specification tells it to.
	sessionIdleTTL = 10 * time.Minute
	// streamHeartbeat pings a client on its open event stream: the write
	// keeps a quiet but live session from idling out and finds a client
	// that went away without closing.
	streamHeartbeat = 30 * time.Second
)

// sessionPrefix matches mcp-go's ids so logs read the same.
const sessionPrefix = "mcp-session-"

var errSession = errors.New("unknown session")

// sessions binds each HTTP session id to the token that created it:
// mcp-go's default ids are only format-checked, so any well-formed id
// would be accepted. A forged id, or another token's id, is answered
// 404 by mcp-go when Validate fails. Sessions past a bound are evicted
// least recently used first, and mcp-go is told through evict.
type sessions struct {
	// evict tells mcp-go a session is gone; it is called without mu held
	// (mcp-go calls back into Terminate).
	evict func(id string)

	mu      sync.Mutex
	byID    map[string]*clist.Element // of *session
	lru     *clist.List               // front: most recently used
	byOwner map[string]int
	evicted uint64 // sessions forgotten for a bound, since start
}

type session struct {
	id, owner string
}

func newSessions(evict func(id string)) *sessions {
	return &sessions{evict: evict, byID: map[string]*clist.Element{}, lru: clist.New(), byOwner: map[string]int{}}
}

// internalKey marks the requests the front door makes itself (telling
// mcp-go of an eviction); no client request can carry a Go context value.
type internalKey struct{}

// ResolveSessionIdManager binds the manager to the caller of r. mcp-go
// passes nil from its idle sweeper and from CloseSessions: those, and the
// front door's own eviction requests, get the manager that may only
// forget sessions.
func (s *sessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil || r.Context().Value(internalKey{}) != nil {
		return sweeper{s}
	}
	return boundSessions{s: s, token: auth.CallerOf(r.Context()).TokenID}
}

// Stats is the table's size and what it evicted.
func (s *sessions) Stats() (open int, evicted uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID), s.evicted
}

// valid reports whether id is a session of token, and marks it used.
func (s *sessions) valid(id, token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, found := s.byID[id]
	if !found || e.Value.(*session).owner != token {
		return false
	}
	s.lru.MoveToFront(e)
	return true
}

// add records a new session of owner and returns the ids evicted to stay
// within the bounds: the owner's least recently used past its share,
// then anyone's past the table's.
func (s *sessions) add(id, owner string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[id] = s.lru.PushFront(&session{id: id, owner: owner})
	s.byOwner[owner]++
	var out []string
	if s.byOwner[owner] > maxSessionsPerToken {
		for e := s.lru.Back(); e != nil; e = e.Prev() {
			if e.Value.(*session).owner == owner {
				out = append(out, s.removeLocked(e))
				break
			}
		}
	}
	for len(s.byID) > maxSessions {
		out = append(out, s.removeLocked(s.lru.Back()))
	}
	s.evicted += uint64(len(out))
	return out
}

// remove forgets id if it is owner's (whoever's when anyOwner is set).
func (s *sessions) remove(id, owner string, anyOwner bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, found := s.byID[id]
	if !found || (!anyOwner && e.Value.(*session).owner != owner) {
		return false
	}
	s.removeLocked(e)
	return true
}

func (s *sessions) removeLocked(e *clist.Element) string {
	ss := s.lru.Remove(e).(*session)
	delete(s.byID, ss.id)
	if s.byOwner[ss.owner]--; s.byOwner[ss.owner] == 0 {
		delete(s.byOwner, ss.owner)
	}
	return ss.id
}

// boundSessions is the manager of one caller's requests.
type boundSessions struct {
	s     *sessions
	token string
}

func (b boundSessions) Generate() string {
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never fails (Go 1.24+)
	id := sessionPrefix + hex.EncodeToString(raw[:])
	for _, old := range b.s.add(id, b.token) {
		b.s.evict(old)
	}
	return id
}

func (b boundSessions) Validate(id string) (bool, error) {
	if !b.s.valid(id, b.token) {
		return false, errSession
	}
	return false, nil
}

func (b boundSessions) Terminate(id string) (bool, error) {
	if !b.s.remove(id, b.token, false) {
		return false, errSession
	}
	return false, nil
}

// sweeper is the manager of mcp-go's own housekeeping: it forgets any
// session (the idle sweeper, shutdown, an eviction already made) and
// accepts nothing new.
type sweeper struct{ s *sessions }

func (w sweeper) Generate() string { return "" }

func (w sweeper) Validate(string) (bool, error) { return false, errSession }

func (w sweeper) Terminate(id string) (bool, error) {
	w.s.remove(id, "", true)
	return false, nil
}

// tellMCPGo returns the evict function for h: a DELETE the front door
// makes itself, which mcp-go answers by freeing the session's state
// (cleanupSessionState is not exported; a DELETE is its public door).
func tellMCPGo(h http.Handler) func(id string) {
	return func(id string) {
		ctx := context.WithValue(context.Background(), internalKey{}, true)
		r, _ := http.NewRequestWithContext(ctx, http.MethodDelete, Path, nil) // a constant method and path cannot fail
		r.Header.Set(server.HeaderKeySessionID, id)
		h.ServeHTTP(discard{}, r)
	}
}

// discard is the response writer of the front door's own requests.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}

var (
	_ server.SessionIdManagerResolver = (*sessions)(nil)
	_ server.SessionIdManager         = boundSessions{}
	_ server.SessionIdManager         = sweeper{}
)
