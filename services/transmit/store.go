package transmit

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
	"sync"
	"time"
)

// Plan store bounds. A plan belongs to its Owner; the store is bounded per
// owner, per token and in all, and only an owner's own plans are ever
// evicted for its new ones: another caller's dry runs cannot push a plan
// out.
const (
	// DefaultPlanTTL is how long a person has between reading a plan and
	// running it; after that the bus may have changed.
	DefaultPlanTTL = 10 * time.Minute
	// MaxPlansPerOwner is one owner's (token and session) share: its
	// oldest plan is dropped for a new one, and counted. 16 is more than
	// a person reads in one sitting.
	MaxPlansPerOwner = 16
	// MaxPlansPerToken bounds one token across its sessions: a token at
	// its quota is refused a new plan (CodeTokenFull) rather than evicting
	// a plan of its other session.
	MaxPlansPerToken = 2 * MaxPlansPerOwner
	// MaxPlans bounds the whole store (a plan holds at most MaxFrames
	// frames, about 16 KiB): full, a new plan is refused (CodePlansFull),
	// never made room for by evicting another caller's.
	MaxPlans = 4 * MaxPlansPerToken
	// planIDBytes of randomness: an id is not guessable from another.
	planIDBytes = 8
	// planPrefix starts every plan id.
	planPrefix = "tx-"
)

// Why a plan ended without running (Plan.Ended).
const (
	EndedDeclined  = "declined"
	EndedCancelled = "cancelled"
	EndedNoAnswer  = "no_answer"
	EndedVoided    = "voided" // its confirmation was presented on another call or by another caller
)

// plans is the bounded, expiring, owner-scoped plan store.
type plans struct {
	mu      sync.Mutex
	byID    map[string]*Plan
	evicted uint64 // own oldest plans dropped for a new one (MaxPlansPerOwner)
	expired uint64
	refused uint64 // new plans refused by MaxPlansPerToken or MaxPlans
}

func newPlans() *plans { return &plans{byID: map[string]*Plan{}} }

func newID(prefix string) string {
	b := make([]byte, planIDBytes)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// put stores p for its owner, first dropping expired plans and, at the
// owner's quota, the owner's oldest. A token or store at its bound refuses.
func (s *plans) put(p *Plan, now time.Time) *Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	var mine []*Plan
	token := 0
	for _, q := range s.byID {
		if q.owner == p.owner {
			mine = append(mine, q)
		}
		if q.owner.Token == p.owner.Token {
			token++
		}
	}
	if len(mine) >= MaxPlansPerOwner {
		sort.Slice(mine, func(i, j int) bool { return mine[i].Created.Before(mine[j].Created) })
		for _, q := range mine[:len(mine)-MaxPlansPerOwner+1] {
			delete(s.byID, q.ID)
			s.evicted++
			token--
		}
	}
	switch {
	case token >= MaxPlansPerToken:
		s.refused++
		return failure(CodeTokenFull, "run or let expire some of this token's plans in its other sessions",
			"this token's sessions hold %d live plans, the most one token may", MaxPlansPerToken)
	case len(s.byID) >= MaxPlans:
		s.refused++
		return failure(CodePlansFull, "try again when plans expire (after "+p.Expires.Sub(p.Created).String()+" at most)",
			"the box holds %d live plans of other callers, the most it keeps", MaxPlans)
	}
	s.byID[p.ID] = p
	return nil
}

func (s *plans) sweep(now time.Time) {
	for id, p := range s.byID {
		if !now.Before(p.Expires) {
			delete(s.byID, id)
			s.expired++
		}
	}
}

// get returns a copy of o's plan id, or nil: another owner's plan is as
// absent as one that never existed.
func (s *plans) get(o Owner, id string, now time.Time) *Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	p := s.byID[id]
	if p == nil || p.owner != o {
		return nil
	}
	c := *p
	return &c
}

// claim marks o's plan executed, once; false if it is gone, another's,
// already run or ended.
func (s *plans) claim(o Owner, id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	p := s.byID[id]
	if p == nil || p.owner != o || p.Executed || p.Ended != "" {
		return false
	}
	p.Executed = true
	return true
}

// end closes a plan that will never run (declined, cancelled, voided).
func (s *plans) end(id, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.byID[id]; p != nil && !p.Executed && p.Ended == "" {
		p.Ended = why
	}
}

// list returns copies of o's live plans, newest first.
func (s *plans) list(o Owner, now time.Time) []Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	out := []Plan{}
	for _, p := range s.byID {
		if p.owner == o {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out
}

// counts is the store's size and counters for transmit_status.
func (s *plans) counts(now time.Time) (stored int, evicted, expired, refused uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	return len(s.byID), s.evicted, s.expired, s.refused
}

// unclaim undoes claim when nothing was sent (the audit refused).
func (s *plans) unclaim(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.byID[id]; p != nil {
		p.Executed = false
	}
}
