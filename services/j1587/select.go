package j1587

import (
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/ring"
)

// Messages is a consistent view of the port's stored messages, oldest
// first by sequence number; it stays valid while the port keeps changing.
func (s *Port) Messages() ring.Snapshot[Record] { return s.msgs.Snapshot() }

// Selection picks stored messages: what j1708_messages lists and
// export_j1708log writes. A nil MID or PID, or a zero time, matches
// everything, so MID 0 and PID 0 can be selected like any other.
type Selection struct {
	MID *byte
	// PID keeps messages that carry it (page 2 numbered 256 + x); a
	// message that does not decode carries none.
	PID *uint16
	// Since is inclusive, Until exclusive.
	Since, Until time.Time
}

// Selector matches records against a Selection. It owns a Decoder, so
// use one per goroutine.
type Selector struct {
	sel Selection
	dec Decoder
	// msg is the message being decoded: the decoder's parameters alias
	// it, so r itself never escapes and matching does not allocate.
	msg [wire.MaxJ1708Message]byte
}

// Selector returns a matcher for sel.
func (sel Selection) Selector() *Selector { return &Selector{sel: sel} }

// Match reports whether r is selected.
func (m *Selector) Match(r *Record) bool {
	s := &m.sel
	switch {
	case !s.Since.IsZero() && r.Time.Before(s.Since), !s.Until.IsZero() && !r.Time.Before(s.Until):
		return false
	case s.MID != nil && (r.Len == 0 || r.Bytes[0] != *s.MID):
		return false
	case s.PID == nil:
		return true
	}
	m.msg = r.Bytes
	return m.dec.Decode(m.msg[:r.Len]) == nil && m.dec.Has(*s.PID)
}

// PIDs lists the J1587 PIDs r carries, in message order; none when it
// does not decode. dec is the caller's scratch decoder.
func (r *Record) PIDs(dec *Decoder) []int {
	pids := []int{}
	if dec.Decode(r.Msg()) == nil {
		for _, p := range dec.Params {
			pids = append(pids, int(p.PID))
		}
	}
	return pids
}
