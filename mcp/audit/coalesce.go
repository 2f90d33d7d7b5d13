package audit

import (
	"slices"
	"time"
)

// Coalescing bounds.
const (
	// refusalWindow is the period over which one caller's refused calls
	// are recorded one by one up to Limits.RefusalsPerWindow, then
	// counted into one record written when the window closes.
	refusalWindow = time.Second
	// maxRefusalCallers bounds the callers tracked at once; refusals of
	// callers past it share one group keyed "*" (still counted).
	maxRefusalCallers = 1024
	// maxCoalescedTools bounds the distinct tool names a group lists;
	// more are counted in the group but not named.
	maxCoalescedTools = 8
)

// refusals is one caller's current window.
type refusals struct {
	start   time.Time
	written int         // records written one by one in this window
	group   *Record     // the coalesced record being counted, nil if none
	timer   *time.Timer // writes group when the window closes
	caller  Caller      // as recorded
}

// refusalKey identifies a caller for coalescing: the address, the token
// and the transport, so one noisy caller never hides another.
func refusalKey(c Caller) string { return c.Transport + "|" + c.Peer + "|" + c.Token }

// coalesce decides what happens to a refusal of caller key: written on
// its own (true), or counted into the caller's group (false). Called
// under Log.mu.
func (a *Log) coalesce(r *Record, now time.Time) bool {
	key := refusalKey(r.Caller)
	w := a.refused[key]
	if w == nil && len(a.refused) >= maxRefusalCallers {
		key = "*"
		w = a.refused[key]
		r.Caller = Caller{Transport: "*", Peer: "*"}
	}
	if w != nil && now.Sub(w.start) >= refusalWindow {
		a.flushLocked(key)
		w = nil
	}
	if w == nil {
		w = &refusals{start: now, caller: r.Caller}
		a.refused[key] = w
	}
	if w.written < a.limits.RefusalsPerWindow {
		w.written++
		return true
	}
	if w.group == nil {
		w.group = &Record{Outcome: OutcomeRefused, Caller: w.caller, Since: r.TS, Tools: []string{}}
		w.timer = time.AfterFunc(refusalWindow-now.Sub(w.start), func() { a.flushKey(key, w) })
	}
	g := w.group
	g.Count++
	g.TS = r.TS
	if g.Error == nil {
		g.Error = r.Error
	}
	if !slices.Contains(g.Tools, r.Tool) && len(g.Tools) < maxCoalescedTools {
		g.Tools = append(g.Tools, r.Tool)
	}
	return false
}

// flushKey writes w's group when its window closes, unless a newer
// window replaced it meanwhile.
func (a *Log) flushKey(key string, w *refusals) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refused[key] == w {
		a.flushLocked(key)
	}
}

// flushLocked writes key's group, if any, and forgets the window. An
// error is counted in the gap like any other lost record.
func (a *Log) flushLocked(key string) {
	w := a.refused[key]
	delete(a.refused, key)
	if w == nil || w.group == nil {
		return
	}
	w.timer.Stop()
	_ = a.writeLocked(w.group)
}
