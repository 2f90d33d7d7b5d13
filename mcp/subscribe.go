package mcp

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Subscription bounds. A subscription is a few hundred bytes; with
// maxSubscriptionsPerSession and the session table's maxSessions the
// whole table stays under a few MB, and it is emptied as sessions go.
const (
	// maxSubscriptionsPerSession bounds one connection's subscriptions
	// (issue #18): an agent watches a handful of views, not hundreds.
	maxSubscriptionsPerSession = 16
	// notifyEvery debounces: at most one notifications/resources/updated
	// per subscription per second, however fast the view changes; a
	// change inside the second is sent when the second is over.
	notifyEvery = time.Second
	// watchTick is how often the watcher reads the views' revisions: a
	// quarter of notifyEvery, so a change is told within about 1.25 s.
	watchTick = notifyEvery / 4
)

// subscriptions tracks resources/subscribe per session and tells each
// subscriber when its view changed: change detection by revision (the
// counters of the stores the view reads), then by a digest of the
// rendering, so a store that moved without changing the view sends
// nothing. The watcher runs only while someone is subscribed, and a
// session's subscriptions go when the session goes (mcp-go's unregister
// hook: stdio end, HTTP DELETE, idle TTL, eviction).
type subscriptions struct {
	v    *views
	send func(session, uri string) error
	now  func() time.Time
	// fixed are URIs that may be subscribed to besides the live views:
	// the conformance fixtures' (conformance.go), none in a box's build.
	// Nothing is told about them.
	fixed []string

	mu        sync.Mutex
	bySession map[string]map[string]*subscription // session id → uri
	stop      chan struct{}                       // closes the running watcher; nil when none runs
	refused   uint64                              // subscribe requests over the bound, since start
	failed    uint64                              // notifications the session could not take
}

type subscription struct {
	view   liveView
	val    string
	rev    uint64            // revision at the last rendering
	digest [sha256.Size]byte // of the last rendering
	told   [sha256.Size]byte // digest the subscriber was last told about (or subscribed at)
	at     time.Time         // when it was last told
}

func newSubscriptions(v *views, send func(session, uri string) error) *subscriptions {
	return &subscriptions{v: v, send: send, now: time.Now, bySession: map[string]map[string]*subscription{}}
}

// hook installs the subscription checks on mcp-go's hooks. A subscribe
// is checked before mcp-go acknowledges it (OnRequestInitialization can
// refuse a request: an unknown or non-live URI, or one too many), and
// recorded after.
func (s *subscriptions) hook(h *server.Hooks) {
	h.AddOnRequestInitialization(func(ctx context.Context, _ any, message any) error {
		raw, isRaw := message.(json.RawMessage)
		// Only the two methods below concern this hook; a message that
		// names neither, and escapes nothing that could spell one, is
		// not decoded (3 % of a small tools/call's CPU).
		if !isRaw || !bytes.Contains(raw, []byte("subscri")) && !bytes.Contains(raw, []byte(`\`)) {
			return nil
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				URI           string `json:"uri"`
				Notifications struct {
					Resources []string `json:"resourceSubscriptions"`
				} `json:"notifications"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &m) != nil {
			return nil
		}
		switch m.Method {
		case string(mcpgo.MethodResourcesSubscribe):
			sess := server.ClientSessionFromContext(ctx)
			if sess == nil {
				return nil
			}
			return s.check(sess.SessionID(), m.Params.URI)
		case "subscriptions/listen":
			if len(m.Params.Notifications.Resources) > 0 {
				return fmt.Errorf("resource subscriptions through subscriptions/listen are not served yet; connect with protocol 2025-11-25 and use resources/subscribe")
			}
		}
		return nil
	})
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcpgo.SubscribeRequest, _ *mcpgo.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			s.add(ctx, sess.SessionID(), req.Params.URI)
		}
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcpgo.UnsubscribeRequest, _ *mcpgo.EmptyResult) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			s.remove(sess.SessionID(), req.Params.URI)
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		s.drop(sess.SessionID())
	})
}

// check refuses a URI that is not a loaded live view, and a subscription
// past the per-session bound (counted).
func (s *subscriptions) check(session, uri string) error {
	if _, _, found := s.v.find(uri); !found && !slices.Contains(s.fixed, uri) {
		return fmt.Errorf("%s is not a live view: only fieldtap://live/… and fieldtap://status can be subscribed to (resources/list, resources/templates/list)", uri)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	subs := s.bySession[session]
	if _, dup := subs[uri]; !dup && len(subs) >= maxSubscriptionsPerSession {
		s.refused++
		return fmt.Errorf("this connection already has %d subscriptions, the most it may hold; unsubscribe from one first (%d subscriptions refused for this bound since start)", maxSubscriptionsPerSession, s.refused)
	}
	return nil
}

// add records a subscription at the view's current rendering, so only a
// later change is told. The bound is checked again: two subscribes of
// one session may have passed check together.
func (s *subscriptions) add(ctx context.Context, session, uri string) {
	lv, val, found := s.v.find(uri)
	if !found {
		return
	}
	rev := s.v.revision(lv)
	r, err := s.v.render(ctx, lv, val)
	if err != nil {
		s.v.d.Log.Warn("subscription not rendered", "uri", uri, "err", err)
		return
	}
	d := r.digest()
	s.mu.Lock()
	defer s.mu.Unlock()
	subs := s.bySession[session]
	if subs == nil {
		subs = map[string]*subscription{}
		s.bySession[session] = subs
	}
	if _, dup := subs[uri]; dup {
		return
	}
	if len(subs) >= maxSubscriptionsPerSession {
		// Two subscribes of one session passed check together.
		s.refused++
		s.v.d.Log.Warn("subscription past the bound not recorded", "uri", uri, "bound", maxSubscriptionsPerSession, "refused_since_start", s.refused)
		return
	}
	subs[uri] = &subscription{view: lv, val: val, rev: rev, digest: d, told: d, at: s.now()}
	if s.stop == nil {
		s.stop = make(chan struct{})
		go s.watch(s.stop)
	}
}

func (s *subscriptions) remove(session, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.bySession[session], uri)
	if len(s.bySession[session]) == 0 {
		delete(s.bySession, session)
	}
	s.idle()
}

// drop forgets every subscription of a session that is gone.
func (s *subscriptions) drop(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.bySession, session)
	s.idle()
}

// idle stops the watcher when nobody is subscribed; mu is held.
func (s *subscriptions) idle() {
	if len(s.bySession) == 0 && s.stop != nil {
		close(s.stop)
		s.stop = nil
	}
}

// count is how many subscriptions are held, for tests.
func (s *subscriptions) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, subs := range s.bySession {
		n += len(subs)
	}
	return n
}

func (s *subscriptions) watch(stop <-chan struct{}) {
	t := time.NewTicker(watchTick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.tick()
		}
	}
}

// due is one notification to send once mu is released.
type due struct{ session, uri string }

// tick renders every subscribed view whose revision moved (once per URI,
// however many sessions watch it) and tells each subscriber whose view's
// digest differs from what it was last told, at most once per
// notifyEvery.
func (s *subscriptions) tick() {
	s.mu.Lock()
	type target struct {
		lv  liveView
		val string
	}
	targets := map[string]target{}
	for _, subs := range s.bySession {
		for uri, sub := range subs {
			targets[uri] = target{sub.view, sub.val}
		}
	}
	s.mu.Unlock()

	// Render outside the lock: a rendering reads stores and may take a
	// while; a subscription added meanwhile keeps its own digest.
	type state struct {
		rev    uint64
		digest [sha256.Size]byte
		ok     bool
	}
	states := map[string]state{}
	for uri, tg := range targets {
		states[uri] = state{rev: s.v.revision(tg.lv)}
	}
	s.mu.Lock()
	need := map[string]bool{}
	for _, subs := range s.bySession {
		for uri, sub := range subs {
			if st := states[uri]; st.rev != sub.rev {
				need[uri] = true
			}
		}
	}
	s.mu.Unlock()
	for uri := range need {
		tg := targets[uri]
		r, err := s.v.render(context.Background(), tg.lv, tg.val)
		if err != nil {
			s.v.d.Log.Warn("live view not rendered", "uri", uri, "err", err)
			continue
		}
		st := states[uri]
		st.digest, st.ok = r.digest(), true
		states[uri] = st
	}

	now := s.now()
	var send []due
	s.mu.Lock()
	for session, subs := range s.bySession {
		for uri, sub := range subs {
			st, seen := states[uri]
			if !seen {
				continue
			}
			if st.ok {
				sub.rev, sub.digest = st.rev, st.digest
			}
			if sub.digest != sub.told && now.Sub(sub.at) >= notifyEvery {
				sub.told, sub.at = sub.digest, now
				send = append(send, due{session, uri})
			}
		}
	}
	s.mu.Unlock()
	slices.SortFunc(send, func(a, b due) int { return cmp.Or(cmp.Compare(a.session, b.session), cmp.Compare(a.uri, b.uri)) })
	for _, n := range send {
		if err := s.send(n.session, n.uri); err != nil {
			s.mu.Lock()
			s.failed++
			failed := s.failed
			s.mu.Unlock()
			s.v.d.Log.Warn("resource update not delivered", "uri", n.uri, "err", err, "undelivered_since_start", failed)
		}
	}
}

// revision is the sum of the counters of the stores a view reads: frames
// taken, each store's revision, restarts, and for an Ethernet view the
// SIP store's revision when a loaded bundle needs that store (without
// one, the media views move with their ports' counters), and the rule
// engine's count of state changes for a view of the rules. It moves
// whenever anything the view could show moved; the digest then decides
// whether it did.
func (v *views) revision(lv liveView) uint64 {
	var rev uint64
	for _, p := range v.d.Ports.Snapshot() {
		if lv.kinds != nil && !slices.Contains(lv.kinds, p.Kind) {
			continue
		}
		rev += p.Frames + p.Restarts + p.Store.Revision
		for _, u := range p.Shared {
			rev += u.Revision
		}
	}
	if v.provided.has(needSIP) && slices.Contains(lv.kinds, portKindEthernet) {
		rev += v.d.SIP.Revision()
	}
	if lv.rules && v.d.Rules != nil {
		rev += v.d.Rules.History().EndSeq() // every state change since start
	}
	return rev
}
