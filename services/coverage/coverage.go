package coverage

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"fieldtap/services/budget"
	"fieldtap/services/ports"
)

// Family is a kind of captured data an answer reads; an answer may read
// several (a set of bits).
type Family uint16

const (
	SIP    Family = 1 << iota // SIP dialogs and messages (Ethernet ports)
	Media                     // RTP streams (Ethernet ports)
	Frames                    // raw Ethernet frames (export, search)
	CAN                       // CAN frames and their tables
	J1939                     // J1939 samples, sessions and tables (CAN ports)
	UDS                       // ISO-TP and UDS transactions (CAN ports)
	J1708                     // J1708/J1587 messages
	// Recorder is the recording on disk, every recorded port.
	Recorder
	// Nothing marks a tool that reads no captured data (its own
	// vocabulary, a reference table, the box's state): its answers carry
	// no coverage block.
	Nothing Family = 1 << 15
)

// families names each family for the answers and documents.
var families = []struct {
	f    Family
	name string
	kind string // the port kind that feeds it; "" for every kind
	// stores are the budget stores it reads, and the noun of their items.
	stores []storeNoun
}{
	{SIP, "sip", "ethernet", []storeNoun{{budget.SIPDialogs, "dialogs"}, {budget.SIPMessages, "SIP messages"}}},
	{Media, "media", "ethernet", []storeNoun{{budget.RTP, "RTP streams"}}},
	{Frames, "frames", "ethernet", []storeNoun{{budget.Frames, "frames"}}},
	{CAN, "can", "can", []storeNoun{{budget.CANFrames, "CAN frames"}}},
	{J1939, "j1939", "can", []storeNoun{{budget.J1939Samples, "SPN samples"}, {budget.J1939Sessions, "TP sessions"}}},
	{UDS, "uds", "can", []storeNoun{{budget.UDS, "UDS transactions"}}},
	{J1708, "j1708", "j1708", []storeNoun{{budget.J1708Messages, "J1708 messages"}}},
	{Recorder, "recorder", "", nil},
}

type storeNoun struct{ store, noun string }

// Names lists the families in f, in a fixed order.
func (f Family) Names() []string {
	var out []string
	for _, e := range families {
		if f&e.f != 0 {
			out = append(out, e.name)
		}
	}
	return out
}

// Query is what one answer read: the families, the ports it was asked
// for (empty: every port that feeds them), and the window it was asked
// for (a zero bound is open).
type Query struct {
	Families     Family
	Ports        []string
	Since, Until time.Time
}

// Cause is traffic seen but not analysed, or an analyser's suspension,
// counted since the port started. Only traffic that may hold what its
// family counts is a Cause: ARP on a SPAN port is not.
type Cause struct {
	Family Family
	Port   string // "" when the count is not kept per port
	Name   string // the counter's name, e.g. tunnel_not_decoded
	Count  uint64
	// What is the cause in words for a warning.
	What string
}

// Inputs are the box's own counters at the moment of the answer.
type Inputs struct {
	Ports       []ports.Status
	Stores      []budget.Use
	NotAnalysed []Cause
	Suspensions []Cause
}

// Port is one port an answer read.
type Port struct {
	Name, Kind, State string
	Live              bool
	Since             time.Time // zero when unknown
	// Lost are the frames lost in the window by cause, and Restarts how
	// often the port was started again since the box started.
	Lost     map[string]uint64
	Restarts uint64
	// StoppedEarly says why a finite source ended before its end: the
	// rest of it was never read.
	StoppedEarly string
}

// Store is one store an answer read.
type Store struct {
	Store, Port string
	Noun        string
	// Seen = Held + Evicted + Refused: items offered to the store.
	Seen, Held, Evicted, Refused uint64
	Oldest                       time.Time // zero for a store that keeps no times, or empty
	// EvictedTo is the newest evicted item's time: the store is whole
	// for a window that starts after it.
	EvictedTo time.Time
}

// Report is what an answer covers.
type Report struct {
	// Complete says the window is whole: nothing in it lost, evicted or
	// skipped in a way that could hide what the answer counts, and no
	// port it read is down, gone or restarting.
	Complete bool
	// From and To are the window the answer covers whole: from the
	// window asked for, the oldest item still held where a store evicted,
	// or the first frame; to the last frame delivered or the window's end.
	// Zero when no port read has delivered a frame.
	From, To    time.Time
	Ports       []Port
	Stores      []Store
	NotAnalysed []Cause
	Suspensions []Cause
	Warnings    []string
}

// Build reports what an answer over q covers, from the counters in in.
func Build(q Query, in Inputs) Report {
	r := Report{Complete: true, From: q.Since, Ports: []Port{}, Stores: []Store{}, NotAnalysed: []Cause{}, Suspensions: []Cause{}}
	kinds := map[string]bool{}
	for _, e := range families {
		if q.Families&e.f != 0 {
			kinds[e.kind] = true
		}
	}
	read, readKinds := map[string]bool{}, map[string]bool{}
	var first time.Time // the first frame of the ports read
	for _, p := range in.Ports {
		if !kinds[p.Kind] && !kinds[""] {
			continue
		}
		if len(q.Ports) > 0 && !slices.Contains(q.Ports, p.Name) {
			continue
		}
		read[p.Name] = true
		readKinds[p.Kind] = true
		r.Ports = append(r.Ports, portOf(p, q))
		if p.LastTime != nil && p.LastTime.After(r.To) {
			r.To = *p.LastTime
		}
		if q.Since.IsZero() && p.FirstTime != nil && (first.IsZero() || p.FirstTime.Before(first)) {
			first = *p.FirstTime
		}
	}
	if r.From.IsZero() {
		r.From = first
	}
	if !q.Until.IsZero() && (r.To.IsZero() || q.Until.Before(r.To)) {
		r.To = q.Until
	}
	for _, e := range families {
		// A store is read when a port that feeds it is: a shared store
		// (no port of its own) through any port of its kind.
		if q.Families&e.f == 0 || !readKinds[e.kind] {
			continue
		}
		for _, sn := range e.stores {
			for _, u := range in.Stores {
				if u.Store != sn.store || (u.Port != "" && !read[u.Port]) || u.Reserved {
					continue
				}
				r.Stores = append(r.Stores, storeOf(u, sn.noun))
			}
		}
	}
	for _, c := range in.NotAnalysed {
		if q.Families&c.Family != 0 && (c.Port == "" || read[c.Port]) && c.Count > 0 {
			r.NotAnalysed = append(r.NotAnalysed, c)
		}
	}
	for _, c := range in.Suspensions {
		if q.Families&c.Family != 0 && (c.Port == "" || read[c.Port]) && c.Count > 0 {
			r.Suspensions = append(r.Suspensions, c)
		}
	}
	// Counters come from maps: one order, so two answers over the same
	// counters are the same bytes.
	for _, cs := range [][]Cause{r.NotAnalysed, r.Suspensions} {
		slices.SortFunc(cs, func(a, b Cause) int { return strings.Compare(a.Port+"\x00"+a.Name, b.Port+"\x00"+b.Name) })
	}
	r.judge(q)
	return r
}

func portOf(p ports.Status, q Query) Port {
	out := Port{Name: p.Name, Kind: p.Kind, State: p.State, Live: p.Live, Restarts: p.Restarts, StoppedEarly: p.StoppedEarly, Lost: map[string]uint64{}}
	if p.StateSince != nil {
		out.Since = *p.StateSince
	}
	for _, l := range p.Losses {
		end := l.At.Add(time.Second)
		if (!q.Since.IsZero() && !end.After(q.Since)) || (!q.Until.IsZero() && !l.At.Before(q.Until)) {
			continue // wholly outside the window
		}
		out.Lost[l.Cause] += l.N
	}
	return out
}

func storeOf(u budget.Use, noun string) Store {
	s := Store{Store: u.Store, Port: u.Port, Noun: noun, Held: uint64(u.Items), Evicted: u.Evicted, Refused: u.Oversize, EvictedTo: u.EvictedTo}
	s.Seen = s.Held + s.Evicted + s.Refused
	if u.Oldest != nil {
		s.Oldest = *u.Oldest
	}
	return s
}

// judge decides whether the window is whole and says, for each way it
// is not, how much is missing, what the answer does cover, and what to do.
func (r *Report) judge(q Query) {
	for _, s := range r.Stores {
		if s.Evicted == 0 && s.Refused == 0 {
			continue
		}
		whole := s.Refused == 0 && !q.Since.IsZero() && q.Since.After(s.EvictedTo)
		if whole {
			continue // the window starts after everything evicted
		}
		r.Complete = false
		from := s.Oldest
		if from.After(r.From) {
			r.From = from
		}
		where := ""
		if s.Port != "" {
			where = " of " + s.Port
		}
		msg := fmt.Sprintf("the %s store%s evicted %d of %d %s seen (%s) to stay within its memory share", s.Store, where, s.Evicted, s.Seen, s.Noun, percent(s.Evicted, s.Seen))
		if s.Refused > 0 {
			msg += fmt.Sprintf(", and refused %d too large to keep", s.Refused)
		}
		if !from.IsZero() {
			msg += fmt.Sprintf(": this answer covers %s from %s on only", s.Noun, stamp(from))
		}
		r.Warnings = append(r.Warnings, msg+". "+r.evictedAdvice())
	}
	for _, p := range r.Ports {
		if n := sum(p.Lost); n > 0 {
			r.Complete = false
			r.Warnings = append(r.Warnings, fmt.Sprintf("port %s lost %d frames in this answer's window (%s): counts here are short by at least that many. Check capture_status for the cause; kernel and handoff_full losses mean the box fell behind the traffic.", p.Name, n, byCause(p.Lost)))
		}
		if p.StoppedEarly != "" {
			r.Complete = false
			r.Warnings = append(r.Warnings, fmt.Sprintf("port %s stopped before the end of its source (%s): what came after is not in this answer.", p.Name, p.StoppedEarly))
		}
		switch p.State {
		case ports.StateDown, ports.StateGone, ports.StateRestarting:
			r.Complete = false
			r.Warnings = append(r.Warnings, fmt.Sprintf("port %s is %s%s: nothing it would have carried since then is in this answer. Check the cable, the adapter and the mirror port; capture_status shows the port's restarts and last error.", p.Name, p.State, since(p.Since)))
		case ports.StateSilent:
			r.Warnings = append(r.Warnings, fmt.Sprintf("port %s is silent%s: its link is up but no frame arrived. If traffic is expected, check the mirror session or the bus wiring.", p.Name, since(p.Since)))
		}
	}
	for _, c := range r.NotAnalysed {
		where := "the ports it read"
		if c.Port != "" {
			where = "port " + c.Port
		}
		r.Complete = false
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s carried %d %s (%s, counted since the port started) that the box did not analyse: what they hold is not in this answer.", where, c.Count, c.What, c.Name))
	}
	for _, c := range r.Suspensions {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d %s (%s, since the port started).", c.Count, c.What, c.Name))
	}
}

// evictedAdvice is what to do about an eviction: on a live box the
// recorder still has what the stores gave up; a file can be read again
// with more room.
func (r *Report) evictedAdvice() string {
	for _, p := range r.Ports {
		if p.Live {
			return "Narrow the question to the held window, search the recorder with find_in_captures for what was evicted, or raise memory_limit_mib."
		}
	}
	return "Narrow the question to the held window, or read the file again with a larger memory_limit_mib (or in parts)."
}

func sum(m map[string]uint64) uint64 {
	var n uint64
	for _, v := range m {
		n += v
	}
	return n
}

// byCause spells a count map in a fixed order: "handoff_full 3, kernel 9".
func byCause(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func percent(n, of uint64) string {
	if of == 0 {
		return "0 %"
	}
	return fmt.Sprintf("%.0f %%", 100*float64(n)/float64(of))
}

func since(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " since " + stamp(t)
}

// stamp is a time as the answers write times.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
