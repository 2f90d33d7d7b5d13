package sip

import (
	"errors"
	"hash/fnv"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"fieldtap/services/ring"
)

// Store defaults (issue #3).
const (
	DefaultDialogs           = 100_000
	DefaultMessagesPerDialog = 500
	// DefaultMessageBytes bounds the raw bytes of all kept messages:
	// 100 000 dialogs × ~10 messages × ~700 bytes.
	DefaultMessageBytes = 512 << 20
	// maxCountKeys bounds the per-method and per-response tallies, whose
	// keys are sender-chosen method names; the rest go to "other".
	maxCountKeys = 256
	// OtherKey collects tallies past maxCountKeys.
	OtherKey = "other"
	// dialogRingBytes is the dialog ring's byte limit: dialogs are counted
	// by Limits.Dialogs alone (each weighs one byte).
	dialogRingBytes = 1 << 62
)

// Limits bound a Store; zero fields take the defaults.
type Limits struct {
	Dialogs           int
	MessagesPerDialog int
	MessageBytes      int64
}

// Meta describes where a message was seen.
type Meta struct {
	Time      time.Time
	Src, Dst  netip.AddrPort
	Transport string // udp, tcp, ws
}

// Stats are the store's counters.
type Stats struct {
	Messages        uint64            `json:"messages"`
	Dialogs         int               `json:"dialogs"`
	DialogsEvicted  uint64            `json:"dialogs_evicted"`
	MessagesShed    uint64            `json:"messages_shed"`    // over the per-dialog cap
	MessagesEvicted uint64            `json:"messages_evicted"` // raw bytes evicted by the message ring
	Requests        map[string]uint64 `json:"requests"`         // by method
	Responses       map[string]uint64 `json:"responses"`        // by "code CSeq-method"
	Undecodable     map[string]uint64 `json:"undecodable"`      // by reason
	Transports      map[string]uint64 `json:"transports"`       // messages by transport
	Revision        uint64            `json:"revision"`
}

type slot struct{ d *Dialog }

// Store keeps SIP dialogs keyed by Call-ID, bounded in dialogs (oldest
// created evicted first), messages per dialog, and message bytes.
type Store struct {
	mu      sync.Mutex
	lim     Limits
	order   *ring.Ring[*slot]
	byID    map[string]*slot
	msgs    *ring.Ring[*Message]
	st      Stats
	cache   *Snapshot
	dialogs uint64
}

// NewStore returns an empty store bounded by l.
func NewStore(l Limits) *Store {
	if l.Dialogs <= 0 {
		l.Dialogs = DefaultDialogs
	}
	if l.MessagesPerDialog <= 0 {
		l.MessagesPerDialog = DefaultMessagesPerDialog
	}
	if l.MessageBytes <= 0 {
		l.MessageBytes = DefaultMessageBytes
	}
	order, err := ring.New[*slot](ring.Limits{Items: l.Dialogs, Bytes: dialogRingBytes}, nil)
	if err != nil {
		panic(err) // limits are positive by construction
	}
	msgs, err := ring.New(ring.Limits{Items: l.Dialogs * l.MessagesPerDialog, Bytes: l.MessageBytes},
		func(m *Message) int { return len(m.Raw) + messageOverhead })
	if err != nil {
		panic(err)
	}
	return &Store{lim: l, order: order, byID: map[string]*slot{}, msgs: msgs, st: Stats{
		Requests: map[string]uint64{}, Responses: map[string]uint64{},
		Undecodable: map[string]uint64{}, Transports: map[string]uint64{},
	}}
}

// messageOverhead approximates a Message's fixed size in the byte bound.
const messageOverhead = 160

// Limits returns the store's bounds.
func (s *Store) Limits() Limits { return s.lim }

// Undecodable counts a message that could not be parsed.
func (s *Store) Undecodable(reason string) {
	s.mu.Lock()
	bump(s.st.Undecodable, reason)
	s.st.Revision++
	s.mu.Unlock()
}

// bump increments m[k], folding new keys past maxCountKeys into OtherKey.
func bump(m map[string]uint64, k string) {
	if _, ok := m[k]; !ok && len(m) >= maxCountKeys {
		k = OtherKey
	}
	m[k]++
}

// Add stores a parsed, validated message. m's slices are borrowed; raw is
// the message's bytes and is copied.
func (s *Store) Add(meta Meta, m *Parsed, raw []byte) {
	callID := string(m.Get(HCallID))
	method := string(m.Method)
	if !m.Request {
		method = string(m.CSeqMethod)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.Messages++
	s.st.Revision++
	bump(s.st.Transports, meta.Transport)
	if m.Request {
		bump(s.st.Requests, method)
	} else {
		bump(s.st.Responses, strconv.Itoa(m.StatusCode)+" "+method)
	}
	sl := s.byID[callID]
	var d Dialog
	if sl == nil {
		sl = s.newDialog(callID, meta, m)
		if sl == nil {
			return
		}
		d = *sl.d
	} else {
		d = *sl.d
	}
	msg := &Message{
		DialogID: d.ID, CallID: d.CallID, Index: d.MessagesKept,
		Time: meta.Time, Src: meta.Src, Dst: meta.Dst, Transport: meta.Transport,
		Request: m.Request, Method: method, StatusCode: m.StatusCode, CSeq: m.CSeqNum,
	}
	update(&d, meta, m, msg)
	if d.MessagesKept < s.lim.MessagesPerDialog {
		msg.Raw = slices.Clone(raw)
		seq, err := s.msgs.Append(msg)
		if err == nil {
			msg.Seq = seq
			d.msgs = append(d.msgs, seq)
			d.MessagesKept++
		} else if errors.Is(err, ring.ErrOversize) {
			d.MessagesShed++
			s.st.MessagesShed++
		}
	} else {
		d.MessagesShed++
		s.st.MessagesShed++
	}
	d.Rev = s.st.Revision
	sl.d = &d
	s.cache = nil
}

func (s *Store) newDialog(callID string, meta Meta, m *Parsed) *slot {
	snap := s.order.Snapshot()
	if snap.Len() >= s.lim.Dialogs {
		if old, ok := snap.Get(snap.FirstSeq()); ok {
			delete(s.byID, old.d.CallID)
			s.st.DialogsEvicted++
		}
	}
	sl := &slot{}
	id, err := s.order.Append(sl)
	if err != nil {
		return nil
	}
	d := &Dialog{ID: id, CallID: callID, Created: meta.Time, Transport: meta.Transport, Src: meta.Src, Dst: meta.Dst}
	if m.Request {
		d.FirstMethod = string(m.Method)
	} else {
		d.FirstMethod = string(m.CSeqMethod)
		d.Src, d.Dst = meta.Dst, meta.Src // a response travels back to the requester
	}
	from, to := m.Get(HFrom), m.Get(HTo)
	d.FromUser, d.ToUser = string(UserOf(URIOf(from))), string(UserOf(URIOf(to)))
	d.FromDisplay, d.ToDisplay = string(DisplayName(from)), string(DisplayName(to))
	d.State = StateOpen
	if d.FirstMethod == "INVITE" {
		d.State = StateCalling
	}
	sl.d = d
	s.byID[callID] = sl
	return sl
}

// update folds one message into d (a private copy).
func update(d *Dialog, meta Meta, m *Parsed, msg *Message) {
	if d.Updated.Before(meta.Time) {
		d.Updated = meta.Time
	}
	addUnique(&d.Participants, meta.Src, maxParticipants)
	addUnique(&d.Participants, meta.Dst, maxParticipants)
	for _, id := range [...]HeaderID{HUserAgent, HServer} {
		if v := m.Get(id); len(v) > 0 && !slices.Contains(d.UserAgents, string(v)) && len(d.UserAgents) < maxDialogUAs {
			d.UserAgents = append(d.UserAgents, string(v))
		}
	}
	if r := m.Get(HReason); len(r) > 0 {
		d.ReasonHeader = string(Unfold(r))
	}
	method := msg.Method
	if !slices.Contains(d.Methods, method) {
		if len(d.Methods) < maxDialogMethods {
			d.Methods = append(d.Methods, method)
		} else {
			d.MethodsOver++
		}
	}
	branch := Param(m.Get(HVia), "branch")
	tx := hash(branch, []byte(method), []byte{byte(m.CSeqNum), byte(m.CSeqNum >> 8), byte(m.CSeqNum >> 16), byte(m.CSeqNum >> 24)})
	key := hash([]byte(meta.Src.String()), []byte(meta.Dst.String()), []byte(strconv.Itoa(m.StatusCode)), []byte{b2u(m.Request)}, u64b(tx))
	if slices.Contains(d.txKeys, key) {
		d.Retransmits++
		msg.Retransmission = true
	} else {
		d.txKeys = append(d.txKeys, key)
	}
	if !slices.Contains(d.txIDs, tx) {
		d.txIDs = append(d.txIDs, tx)
		d.Transactions++
	}
	t := meta.Time
	if m.Request {
		d.Requests++
		switch method {
		case "INVITE":
			if d.InviteAt.IsZero() {
				d.InviteAt = t
			}
		case "ACK":
			d.AckSeen = true
		case "CANCEL":
			d.CancelSeen = true
		case "BYE":
			d.ByeSeen = true
			if d.ByeAt.IsZero() {
				d.ByeAt = t
			}
			if d.State == StateAnswered {
				d.State = StateEnded
			}
		}
		return
	}
	d.Responses++
	code := m.StatusCode
	if code == 401 || code == 407 {
		d.AuthChallenge++
	}
	if tag := Param(m.Get(HTo), "tag"); len(tag) > 0 && !slices.Contains(d.ToTags, string(tag)) && len(d.ToTags) < maxToTags {
		d.ToTags = append(d.ToTags, string(tag))
	}
	if method != d.FirstMethod {
		return
	}
	if method != "INVITE" {
		if code >= 200 && d.FinalCode == 0 || code >= 200 && d.FinalCode >= 300 {
			d.FinalCode, d.FinalReason, d.FinalAt = code, string(m.Reason), t
			d.State = StateCompleted
			if code >= 300 {
				d.State = StateRejected
			}
		}
		return
	}
	switch {
	case code < 200:
		if (code == 180 || code == 183) && d.RingAt.IsZero() {
			d.RingAt = t
		}
		if d.FinalCode == 0 {
			if code >= 180 {
				d.State = StateEarly
			} else if d.State == StateCalling {
				d.State = StateProceeding
			}
		}
	case code < 300:
		if d.AnswerAt.IsZero() {
			d.AnswerAt = t
		}
		if d.FinalCode == 0 || d.FinalCode >= 300 {
			d.FinalCode, d.FinalReason, d.FinalAt = code, string(m.Reason), t
			if d.ByeSeen {
				d.State = StateEnded
			} else {
				d.State = StateAnswered
			}
		}
	default:
		// A failed re-INVITE does not fail an answered call.
		if d.FinalCode == 0 || d.FinalCode >= 300 {
			d.FinalCode, d.FinalReason, d.FinalAt = code, string(m.Reason), t
			d.State = StateFailed
			if code == 487 && d.CancelSeen {
				d.State = StateCancelled
			}
		}
	}
}

func addUnique[T comparable](s *[]T, v T, limit int) {
	if len(*s) < limit && !slices.Contains(*s, v) {
		*s = append(*s, v)
	}
}

func hash(parts ...[]byte) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return h.Sum64()
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func u64b(v uint64) []byte {
	return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24), byte(v >> 32), byte(v >> 40), byte(v >> 48), byte(v >> 56)}
}

// Snapshot is a consistent view of the store at one revision.
type Snapshot struct {
	Dialogs  []*Dialog // oldest first (by ID)
	Revision uint64
	Stats    Stats
	msgs     ring.Snapshot[*Message]
}

// Message returns the stored message with sequence number seq, if still kept.
func (sn *Snapshot) Message(seq uint64) (*Message, bool) { return sn.msgs.Get(seq) }

// Lookup returns the dialog with callID in this view.
func (sn *Snapshot) Lookup(callID string) *Dialog {
	for _, d := range sn.Dialogs {
		if d.CallID == callID {
			return d
		}
	}
	return nil
}

// Snapshot returns the current view. Views are cached per revision, so an
// idle store answers repeated reads without copying.
func (s *Store) Snapshot() *Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache != nil {
		return s.cache
	}
	o := s.order.Snapshot()
	ds := make([]*Dialog, 0, o.Len())
	o.Range(0, func(_ uint64, sl *slot) bool {
		ds = append(ds, sl.d)
		return true
	})
	st := s.st
	st.Requests, st.Responses = maps.Clone(s.st.Requests), maps.Clone(s.st.Responses)
	st.Undecodable, st.Transports = maps.Clone(s.st.Undecodable), maps.Clone(s.st.Transports)
	st.Dialogs = len(ds)
	st.MessagesEvicted = s.msgs.Stats().Evicted
	s.cache = &Snapshot{Dialogs: ds, Revision: s.st.Revision, Stats: st, msgs: s.msgs.Snapshot()}
	return s.cache
}

// Revision changes on every stored message or counted failure.
func (s *Store) Revision() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Revision
}
