package transmit

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
	"sync"
	"time"
)

// Plan store bounds.
const (
	// DefaultPlanTTL is how long a person has between reading a plan and
	// running it; after that the bus may have changed.
	DefaultPlanTTL = 10 * time.Minute
	// MaxPlans bounds the store; the oldest plan is dropped for a new one,
	// and counted.
	MaxPlans = 64
	// planIDBytes of randomness: an id is not guessable from another.
	planIDBytes = 8
)

// plans is the bounded, expiring plan store.
type plans struct {
	mu      sync.Mutex
	byID    map[string]*Plan
	evicted uint64
	expired uint64
}

func newPlans() *plans { return &plans{byID: map[string]*Plan{}} }

func newID(prefix string) string {
	b := make([]byte, planIDBytes)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// put stores p, first dropping expired plans and, when full, the oldest.
func (s *plans) put(p *Plan, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	for len(s.byID) >= MaxPlans {
		var oldest *Plan
		for _, q := range s.byID {
			if oldest == nil || q.Created.Before(oldest.Created) {
				oldest = q
			}
		}
		delete(s.byID, oldest.ID)
		s.evicted++
	}
	s.byID[p.ID] = p
}

func (s *plans) sweep(now time.Time) {
	for id, p := range s.byID {
		if !now.Before(p.Expires) {
			delete(s.byID, id)
			s.expired++
		}
	}
}

// get returns a copy of the plan, or nil.
func (s *plans) get(id string, now time.Time) *Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	p := s.byID[id]
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// claim marks the plan executed, once; false if it is gone or already run.
func (s *plans) claim(id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	p := s.byID[id]
	if p == nil || p.Executed {
		return false
	}
	p.Executed = true
	return true
}

// list returns copies of every live plan, newest first.
func (s *plans) list(now time.Time) []Plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(now)
	out := make([]Plan, 0, len(s.byID))
	for _, p := range s.byID {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out
}

// unclaim undoes claim when nothing was sent (the audit refused).
func (s *plans) unclaim(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.byID[id]; p != nil {
		p.Executed = false
	}
}
