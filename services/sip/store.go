package sip

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"fieldtap/services/heapsize"
	"fieldtap/services/ring"
)

// Store defaults, for a store built without a memory budget (tests,
// tools); the daemon derives every bound from its budget (issue #14).
const (
	DefaultMessagesPerDialog = 500
	// DefaultTransactionsPerDialog: a transaction is at least a request
	// and its final response, so a dialog cannot show more than half
	// the messages it keeps; their bytes count in the dialog's share.
	DefaultTransactionsPerDialog = DefaultMessagesPerDialog / 2
	// DefaultMessageBytes and DefaultDialogBytes are heap bytes: about
	// what a 128 MiB budget gives SIP on a box with one SPAN port.
	DefaultMessageBytes = 24 << 20
	DefaultDialogBytes  = 16 << 20
	// maxCountKeys bounds the per-method and per-response tallies, whose
	// keys are sender-chosen method names; the rest go to "other". It
	// also bounds the interned method names and response keys.
	maxCountKeys = 256
	// OtherKey collects tallies past maxCountKeys.
	OtherKey = "other"
	// rawSlab is one allocation of raw message bytes: messages are
	// evicted oldest first, so a slab is free soon after its last
	// message; at 32 KiB it holds ~45 messages of 700 bytes, one
	// pointer-free allocation instead of 45.
	rawSlab = 32 << 10
)

// Limits bound a Store; zero fields take the defaults. Bytes are heap
// bytes as the store accounts them: a message's struct, its raw bytes and
// its ring slot; a dialog's summary, every list and string it holds, and
// its index entry.
type Limits struct {
	// Dialogs 0 is as many as DialogBytes could hold, each at its least
	// (MinDialogBytes): the byte bound decides.
	Dialogs           int
	MessagesPerDialog int
	// TransactionsPerDialog bounds Dialog.Txns; more are counted in
	// Dialog.TxnsShed and Stats.TransactionsShed.
	TransactionsPerDialog int
	MessageBytes          int64
	// DialogBytes bounds the dialogs' bytes; capture_status shows it as
	// sip_dialogs' share, get_capture_report's limits leave it out.
	DialogBytes int64
}

// Meta describes where a message was seen.
type Meta struct {
	Time      time.Time
	Src, Dst  netip.AddrPort
	Transport string // udp, tcp, ws
}

// Stats are the store's counters.
type Stats struct {
	Messages        uint64
	Dialogs         int
	DialogsEvicted  uint64
	MessagesShed    uint64 // over the per-dialog cap
	MessagesEvicted uint64 // raw messages evicted by the message bound
	// TransactionsShed counts transactions past a dialog's bound: still
	// counted in its totals, not kept in its list.
	TransactionsShed uint64
	Requests         map[string]uint64 // by method
	Responses        map[string]uint64 // by "code CSeq-method"
	Undecodable      map[string]uint64 // by reason
	Transports       map[string]uint64 // messages by transport
	Revision         uint64
}

// slot is one dialog's place in the dialog ring.
type slot struct {
	d   *Dialog
	seq uint64 // its dialog ring sequence number (Dialog.ID)
	// epoch is the store's snapshot epoch when d was allocated: while it
	// is still the current one, no snapshot holds d and Add may change d
	// in place instead of publishing a copy.
	epoch uint64
}

// respKey names a response tally without building its string per
// message; otherResp is the key counts past maxCountKeys go to.
type respKey struct {
	code   int
	method string
}

var otherResp = respKey{code: -1}

// name is the key's Stats.Responses key, "code CSeq-method".
func (k respKey) name() string {
	if k == otherResp {
		return OtherKey
	}
	return strconv.Itoa(k.code) + " " + k.method
}

// Store keeps SIP dialogs keyed by Call-ID, bounded in dialogs (oldest
// created evicted first), messages per dialog, and the heap bytes of
// dialogs and of messages. It is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	lim   Limits
	order *ring.Ring[*slot]
	byID  map[string]*slot
	msgs  *ring.Ring[Message]
	st    Stats
	cache *Snapshot
	epoch uint64
	carry *carrier // the newest site columns, for the next snapshot's (carry.go)
	// live mirrors the dialog ring for Snapshot: each kept slot's dialog
	// and the epoch it was allocated in, by sequence number from
	// live.first, in flat arrays a snapshot copies instead of reading
	// every slot (at 100,000 dialogs a cache miss each, most of a live
	// store's snapshot: docs/benchmarks.md).
	live struct {
		first  uint64
		ds     []*Dialog
		epochs []uint64
		broken bool // out of step with the ring: Snapshot rebuilds it
	}
	raw     *ring.Slabs // the kept messages' raw bytes
	regs    regTable    // registrations per AoR (registrations.go)
	methods map[string]string
	// hotMethods are the first interned methods, compared before the
	// map is asked (intern).
	hotMethods []string
	// The message tallies Stats shows as maps (Requests, Responses,
	// Transports), kept without hashing (tally).
	requests, transports tally[string]
	responses            tally[respKey]
	txns                 spares[Transaction]
	words                spares[uint64]
	// texts holds one copy of the sender text dialogs repeat (texts.go).
	texts sharedTexts
	// spareDialogs are evicted dialogs no snapshot held, for the next
	// new ones (at most maxSpares): a 1,024-byte allocation the
	// collector scans, once per dialog.
	spareDialogs []*Dialog
}

// New returns an empty store bounded by l.
func New(l Limits) (*Store, error) {
	if l.Dialogs < 0 || l.MessagesPerDialog < 0 || l.TransactionsPerDialog < 0 || l.MessageBytes < 0 || l.DialogBytes < 0 {
		return nil, fmt.Errorf("sip: limits %+v: want positive values, or 0 for the defaults", l)
	}
	if l.MessagesPerDialog == 0 {
		l.MessagesPerDialog = DefaultMessagesPerDialog
	}
	if l.TransactionsPerDialog == 0 {
		l.TransactionsPerDialog = max(l.MessagesPerDialog/2, 1)
	}
	if l.MessageBytes == 0 {
		l.MessageBytes = DefaultMessageBytes
	}
	if l.DialogBytes == 0 {
		l.DialogBytes = DefaultDialogBytes
	}
	if l.Dialogs == 0 {
		l.Dialogs = int(max(l.DialogBytes/MinDialogBytes(), 1))
	}
	if minD, minM := minBounds(); l.DialogBytes < minD || l.MessageBytes < minM {
		return nil, fmt.Errorf("sip: %d dialog bytes and %d message bytes hold no dialog: want at least %d and %d",
			l.DialogBytes, l.MessageBytes, minD, minM)
	}
	s := &Store{lim: l, carry: &carrier{}, byID: map[string]*slot{}, methods: map[string]string{}, st: Stats{Undecodable: map[string]uint64{}},
		texts: sharedTexts{m: map[string]string{}}, txns: txnSpares(), words: wordSpares()}
	s.requests = tally[string]{other: OtherKey, name: func(k string) string { return k }}
	s.transports = s.requests
	s.responses = tally[respKey]{other: otherResp, name: respKey.name}
	var err error
	s.order, err = ring.New(ring.Limits{Items: l.Dialogs, Bytes: l.DialogBytes}, func(sl *slot) int { return dialogBytes(sl) })
	if err != nil {
		return nil, fmt.Errorf("sip: dialogs: %w", err)
	}
	s.order.OnEvict(func(sl *slot) {
		s.liveEvict(sl.seq)
		if s.byID[sl.d.CallID] == sl {
			delete(s.byID, sl.d.CallID)
		}
		if sl.epoch == s.epoch {
			// No snapshot holds the dialog: it, its transactions and its
			// word arrays are no one's (its other lists may share arrays
			// with a snapshot's older copy).
			s.txns.keep(sl.d.Txns)
			s.words.keep(sl.d.msgs)
			s.words.keep(sl.d.txKeys)
			s.words.keep(sl.d.txIDs)
			if len(s.spareDialogs) < maxSpares {
				s.spareDialogs = append(s.spareDialogs, sl.d)
			}
		}
		s.st.DialogsEvicted++
	})
	s.order.TimeOf(func(sl **slot) time.Time { return (*sl).d.Created })
	// No message weighs less than its slot: the byte bound decides.
	s.msgs, err = ring.New(ring.Limits{Items: int(max(l.MessageBytes/MessageSlotBytes(), 1)), Bytes: l.MessageBytes}, messageBytes)
	if err != nil {
		return nil, fmt.Errorf("sip: messages: %w", err)
	}
	// While no one reads, evicted messages' chunks and slabs are filled
	// again rather than left to the collector (ring.Slabs).
	s.msgs.ReuseChunks()
	s.msgs.TimeOf(func(m *Message) time.Time { return m.Time })
	s.msgs.KeepTimes()
	s.raw = ring.NewSlabs(s.msgs, rawSlab)
	return s, nil
}

// Limits returns the store's bounds.
func (s *Store) Limits() Limits { return s.lim }

// DialogStats and MessageStats report the two rings: items and heap
// bytes kept, bounds, evictions.
func (s *Store) DialogStats() ring.Stats  { return s.order.Stats() }
func (s *Store) MessageStats() ring.Stats { return s.msgs.Stats() }

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

// intern returns b as a string shared by every message that carries it,
// for up to maxCountKeys distinct values; past that each gets its own.
// The caller holds mu.
func (s *Store) intern(b []byte) string {
	for _, v := range s.hotMethods {
		if v == string(b) {
			return v
		}
	}
	if v, ok := s.methods[string(b)]; ok {
		return v
	}
	v := string(b)
	if len(s.methods) < maxCountKeys {
		s.methods[v] = v
		if len(s.hotMethods) < tallyScan {
			s.hotMethods = append(s.hotMethods, v)
		}
	}
	return v
}

// Add stores a parsed, validated message. m's slices are borrowed; raw is
// the message's bytes and is copied.
func (s *Store) Add(meta Meta, m *Parsed, raw []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	method := s.intern(m.Method)
	if !m.Request {
		method = s.intern(m.CSeqMethod)
	}
	s.st.Messages++
	s.st.Revision++
	s.transports.add(meta.Transport)
	if m.Request {
		s.requests.add(method)
	} else {
		s.responses.add(respKey{m.StatusCode, method})
	}
	sl := s.byID[string(m.Get(HCallID))]
	if sl == nil {
		if sl = s.newDialog(meta, m, method); sl == nil {
			return
		}
	}
	d := sl.d
	if sl.epoch != s.epoch {
		// A snapshot may hold d: publish a copy (forUpdate).
		d = d.forUpdate()
		sl.d, sl.epoch = d, s.epoch
		s.liveSet(sl)
	}
	msg := Message{
		DialogID: d.ID, CallID: d.CallID, Index: d.MessagesKept, // its place among the kept: get_message's index
		Time: meta.Time, Src: meta.Src, Dst: meta.Dst, Transport: meta.Transport,
		Request: m.Request, Method: method, StatusCode: m.StatusCode, CSeq: m.CSeqNum,
	}
	if s.update(d, meta, m, &msg) {
		s.st.TransactionsShed++
	}
	s.regs.observe(meta, m, method, msg.Retransmission)
	if d.MessagesKept < s.lim.MessagesPerDialog {
		msg.Raw = s.raw.Copy(raw)
		seq, err := s.msgs.AppendSeq(func(seq uint64) Message {
			msg.Seq = seq
			return msg
		})
		s.raw.Seal()
		if err == nil {
			d.msgs = s.words.append(inArray(d.msgs, d.msgsIn[:]), seq)
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
	s.order.Resize(sl.seq, dialogBytes(sl))
	s.cache = nil
}

// forUpdate is the copy of d the store changes while a snapshot may
// hold d: every field but the memo words (figs*, problems), which
// readers of d write atomically, and which the copy, about to change,
// starts without. Field by field, not *d: a plain copy of the struct
// read those words under the readers' atomic writes (a data race).
// TestForUpdateCopiesEveryField holds the list to Dialog's fields. The
// lists share their arrays with d, which only ever appends past what d
// shows; transactions change in place (a final response fills one in)
// and outgrown word arrays go to other dialogs (spares), so the copy
// gets its own arrays of those; lists in d's own arrays move to the
// copy's, so the copy does not keep d alive.
func (d *Dialog) forUpdate() *Dialog {
	c := &Dialog{
		ID:            d.ID,
		FinalCode:     d.FinalCode,
		State:         d.State,
		FromUser:      d.FromUser,
		ToUser:        d.ToUser,
		FirstMethod:   d.FirstMethod,
		Transport:     d.Transport,
		Methods:       d.Methods,
		Rev:           d.Rev,
		CallID:        d.CallID,
		Created:       d.Created,
		Updated:       d.Updated,
		HasInvite:     d.HasInvite,
		MethodsOver:   d.MethodsOver,
		FinalReason:   d.FinalReason,
		ReasonHeader:  d.ReasonHeader,
		FromDisplay:   d.FromDisplay,
		ToDisplay:     d.ToDisplay,
		Src:           d.Src,
		Dst:           d.Dst,
		Participants:  d.Participants,
		UserAgents:    d.UserAgents,
		Requests:      d.Requests,
		Responses:     d.Responses,
		Retransmits:   d.Retransmits,
		Transactions:  d.Transactions,
		TxnsShed:      d.TxnsShed,
		AuthChallenge: d.AuthChallenge,
		ToTags:        d.ToTags,
		SessionIDs:    d.SessionIDs,
		ICIDs:         d.ICIDs,
		XHeaders:      d.XHeaders,
		CancelSeen:    d.CancelSeen,
		AckSeen:       d.AckSeen,
		ByeSeen:       d.ByeSeen,
		MessagesKept:  d.MessagesKept,
		MessagesShed:  d.MessagesShed,
		InviteAt:      d.InviteAt,
		RingAt:        d.RingAt,
		AnswerAt:      d.AnswerAt,
		ByeAt:         d.ByeAt,
		FinalAt:       d.FinalAt,
		msgsIn:        d.msgsIn,
		keysIn:        d.keysIn,
		idsIn:         d.idsIn,
		partsIn:       d.partsIn,
		methodsIn:     d.methodsIn,
		tagsIn:        d.tagsIn,
		listBytes:     d.listBytes,
	}
	c.Txns = slices.Clone(d.Txns)
	c.msgs, c.txKeys, c.txIDs = ownWords(d.msgs, d.msgsIn[:], c.msgsIn[:]), ownWords(d.txKeys, d.keysIn[:], c.keysIn[:]), ownWords(d.txIDs, d.idsIn[:], c.idsIn[:])
	c.Participants = own(d.Participants, d.partsIn[:], c.partsIn[:])
	c.Methods = own(d.Methods, d.methodsIn[:], c.methodsIn[:])
	c.ToTags = own(d.ToTags, d.tagsIn[:], c.tagsIn[:])
	return c
}

func (s *Store) newDialog(meta Meta, m *Parsed, method string) *slot {
	sl := &slot{epoch: s.epoch}
	var d *Dialog
	if n := len(s.spareDialogs); n > 0 {
		d = s.spareDialogs[n-1]
		s.spareDialogs[n-1] = nil
		s.spareDialogs = s.spareDialogs[:n-1]
		*d = Dialog{Created: meta.Time, Transport: meta.Transport, Src: meta.Src, Dst: meta.Dst}
	} else {
		d = &Dialog{Created: meta.Time, Transport: meta.Transport, Src: meta.Src, Dst: meta.Dst}
	}
	d.FirstMethod = method
	if !m.Request {
		d.Src, d.Dst = meta.Dst, meta.Src // a response travels back to the requester
	}
	from, to := m.Get(HFrom), m.Get(HTo)
	d.setIdents(m.Get(HCallID), UserOf(URIOf(from)), UserOf(URIOf(to)), DisplayName(from), DisplayName(to))
	d.State = StateOpen
	if d.FirstMethod == "INVITE" {
		d.State = StateCalling
	}
	sl.d = d
	if _, err := s.order.AppendSeq(func(seq uint64) *slot {
		sl.seq, d.ID = seq, seq
		return sl
	}); err != nil {
		return nil // alone larger than the dialog bound: counted by the ring
	}
	s.liveAppend(sl)
	s.byID[d.CallID] = sl
	return sl
}

// update folds one message into d (a private copy), keeping at most
// Limits.TransactionsPerDialog transactions; it reports whether the
// message opened a transaction past that bound.
func (s *Store) update(d *Dialog, meta Meta, m *Parsed, msg *Message) (shed bool) {
	if d.Updated.Before(meta.Time) {
		d.Updated = meta.Time
	}
	d.Participants = inArray(d.Participants, d.partsIn[:])
	addUnique(&d.Participants, meta.Src, maxParticipants)
	addUnique(&d.Participants, meta.Dst, maxParticipants)
	for _, id := range [...]HeaderID{HUserAgent, HServer} {
		if v := m.Get(id); len(v) > 0 && len(d.UserAgents) < maxDialogUAs && !containsBytes(d.UserAgents, v) {
			ua := s.texts.get(v)
			d.UserAgents = append(d.UserAgents, ua)
			d.listBytes += heapsize.String(ua)
		}
	}
	noteCorrelation(d, m)
	if r := m.Get(HReason); len(r) > 0 {
		d.ReasonHeader = string(Unfold(r))
	}
	method := msg.Method
	if !slices.Contains(d.Methods, method) {
		if len(d.Methods) < maxDialogMethods {
			d.Methods = append(inArray(d.Methods, d.methodsIn[:]), method)
		} else {
			d.MethodsOver++
		}
	}
	branch := m.ViaBranch()
	var buf [64]byte
	b := binary.LittleEndian.AppendUint64(buf[:0], maphash.Bytes(txSeed, branch))
	b = binary.LittleEndian.AppendUint32(b, m.CSeqNum)
	// The method's bytes themselves, after their length, when short (all
	// RFC methods are): a hash of them cost as much as the copy.
	if len(method) <= maxTxMethod {
		b = append(append(b, byte(len(method))), method...)
	} else {
		b = binary.LittleEndian.AppendUint64(append(b, 0xff), maphash.String(txSeed, method))
	}
	tx := maphash.Bytes(txSeed, b)
	b = appendAddrPort(buf[:0], meta.Src)
	b = appendAddrPort(b, meta.Dst)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.StatusCode))
	b = append(b, b2u(m.Request))
	key := maphash.Bytes(txSeed, binary.LittleEndian.AppendUint64(b, tx))
	if slices.Contains(d.txKeys, key) {
		d.Retransmits++
		msg.Retransmission = true
	} else {
		d.txKeys = s.words.append(inArray(d.txKeys, d.keysIn[:]), key)
	}
	t := meta.Time
	ti := slices.Index(d.txIDs, tx)
	if ti < 0 {
		ti = len(d.txIDs)
		d.txIDs = s.words.append(inArray(d.txIDs, d.idsIn[:]), tx)
		d.Transactions++
		if len(d.Txns) < s.lim.TransactionsPerDialog {
			d.Txns = s.txns.append(d.Txns, newTransaction(meta, m, method, branch))
			d.listBytes += heapsize.String(d.Txns[len(d.Txns)-1].Branch)
		} else {
			d.TxnsShed++
			shed = true
		}
	}
	// txIDs and Txns share their order: the first len(Txns) ids are kept.
	var txn *Transaction
	if ti < len(d.Txns) {
		txn = &d.Txns[ti]
		d.listBytes += txn.note(m, t, &s.texts)
	}
	if method == "INVITE" && !d.HasInvite {
		// The Call-ID opened with another method (a REGISTER, say): from
		// here on it is judged as a call; the earlier outcome stays in its
		// own transaction.
		d.HasInvite = true
		d.FinalCode, d.FinalReason, d.FinalAt, d.State = 0, "", time.Time{}, StateCalling
	}
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
			// A mirror may deliver the 487 before the CANCEL.
			if d.State == StateFailed && d.FinalCode == 487 {
				d.State = StateCancelled
			}
		case "BYE":
			d.ByeSeen = true
			if d.ByeAt.IsZero() {
				d.ByeAt = t
			}
			if d.State == StateAnswered {
				d.State = StateEnded
			}
		}
		return shed
	}
	d.Responses++
	code := m.StatusCode
	if code == 401 || code == 407 {
		d.AuthChallenge++
	}
	if tag := m.ToTag(); len(tag) > 0 && len(d.ToTags) < maxToTags && !containsBytes(d.ToTags, tag) {
		tg := string(tag)
		d.ToTags = append(inArray(d.ToTags, d.tagsIn[:]), tg)
		d.listBytes += heapsize.String(tg)
	}
	if method != d.CallMethod() {
		return shed
	}
	if method != "INVITE" {
		if code >= 200 && d.FinalCode == 0 || code >= 200 && d.FinalCode >= 300 {
			d.FinalCode, d.FinalReason, d.FinalAt = code, s.texts.get(m.Reason), t
			d.State = StateCompleted
			if code >= 300 {
				d.State = StateRejected
			}
		}
		return shed
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
			d.FinalCode, d.FinalReason, d.FinalAt = code, s.texts.get(m.Reason), t
			if d.ByeSeen {
				d.State = StateEnded
			} else {
				d.State = StateAnswered
			}
		}
	default:
		// A failed re-INVITE does not fail an answered call.
		if d.FinalCode == 0 || d.FinalCode >= 300 {
			d.FinalCode, d.FinalReason, d.FinalAt = code, s.texts.get(m.Reason), t
			d.State = StateFailed
			if code == 487 && d.CancelSeen {
				d.State = StateCancelled
			}
		}
	}
	return shed
}

func newTransaction(meta Meta, m *Parsed, method string, branch []byte) Transaction {
	tx := Transaction{Method: method, Branch: string(branch[:min(len(branch), maxBranchBytes)]), CSeq: m.CSeqNum,
		Src: meta.Src, Dst: meta.Dst, Start: meta.Time}
	if !m.Request {
		tx.Src, tx.Dst = meta.Dst, meta.Src // the response travels back to the requester
	}
	return tx
}

// note folds one of the transaction's messages into it and returns the
// heap bytes of the string it kept (a final response's reason phrase,
// charged as its own though texts may share it).
func (tx *Transaction) note(m *Parsed, t time.Time, texts *sharedTexts) (kept int) {
	if m.Request {
		tx.Requests++
		// The request's To tag, not a response's, says whether it was
		// sent inside a dialog.
		tx.InDialog = tx.InDialog || len(m.ToTag()) > 0
		return 0
	}
	tx.Responses++
	if m.StatusCode < 200 && tx.Provisional.IsZero() {
		tx.Provisional = t
	}
	switch c := m.StatusCode; {
	case c == 180 || c == 183:
		if tx.RingAt.IsZero() {
			tx.RingAt = t
		}
	case c >= 200 && tx.FinalCode == 0:
		tx.FinalCode, tx.FinalReason, tx.FinalAt = c, texts.get(m.Reason), t
		return heapsize.String(tx.FinalReason)
	}
	return 0
}

// setIdents sets the Call-ID, the user parts and the display names, all
// five in one string: they live and die with the dialog, and one
// allocation instead of five is a fifth of what a new dialog cost the
// collector. dialogBytes charges them as five strings, as before
// (identBytes).
func (d *Dialog) setIdents(callID, fromUser, toUser, fromDisplay, toDisplay []byte) {
	var buf [256]byte
	parts := [...][]byte{callID, fromUser, toUser, fromDisplay, toDisplay}
	b := buf[:0]
	for _, p := range parts {
		b = append(b, p...)
	}
	all := string(b)
	var out [len(parts)]string
	for i, p := range parts {
		out[i], all = all[:len(p)], all[len(p):]
	}
	d.CallID, d.FromUser, d.ToUser, d.FromDisplay, d.ToDisplay = out[0], out[1], out[2], out[3], out[4]
}

// identBytes is what d's identities are charged: what five strings of
// their own held, as they were charged before setIdents put them in one,
// so that a dialog's charge, and which dialogs a full store keeps, does
// not move with how they are allocated. The one string's size class is
// most often smaller (a Call-ID of 20 bytes and two 4-byte users: 32
// bytes in one, 40 in three); where it is larger, it is charged.
func (d *Dialog) identBytes() int {
	apart := 0
	for _, s := range [...]string{d.CallID, d.FromUser, d.ToUser, d.FromDisplay, d.ToDisplay} {
		apart += heapsize.String(s)
	}
	return max(apart, heapsize.Bytes(len(d.CallID)+len(d.FromUser)+len(d.ToUser)+len(d.FromDisplay)+len(d.ToDisplay)))
}

// inArray is list, or in's array to append to while list has none.
func inArray[T any](list, in []T) []T {
	if cap(list) == 0 {
		return in[:0]
	}
	return list
}

// own points a copy's list at its own array in the Dialog where the
// original's pointed at the original's, so the copy does not keep the
// original alive.
func own[T any](list, was, in []T) []T {
	if cap(list) > 0 && &list[:1][0] == &was[0] {
		return in[:len(list)]
	}
	return list
}

// ownWords is own for a word list, whose array outside the Dialog the
// copy gets its own of, of the same capacity (so the same charge): the
// store gives a dialog's outgrown word arrays to other dialogs (spares).
func ownWords(list, was, in []uint64) []uint64 {
	if cap(list) == 0 || &list[:1][0] == &was[0] {
		return own(list, was, in)
	}
	return append(make([]uint64, 0, cap(list)), list...)
}

func addUnique[T comparable](s *[]T, v T, limit int) {
	if len(*s) < limit && !slices.Contains(*s, v) {
		*s = append(*s, v)
	}
}

// txSeed keys the transaction and retransmission hashes. They are only
// compared within one dialog, never shown or kept past the process, so
// the runtime's hash (maphash) serves: FNV-1a byte by byte over the Via
// branch and both endpoints cost a tenth of a message's update
// (docs/benchmarks.md).
var txSeed = maphash.MakeSeed()

// maxTxMethod is the longest method a transaction hash takes as it is
// (a length byte below 0xff); a longer one is hashed first.
const maxTxMethod = 32

// appendAddrPort appends a's 16-byte address and port: equal endpoints
// give equal bytes, which is all a retransmission key needs.
func appendAddrPort(b []byte, a netip.AddrPort) []byte {
	ip := a.Addr().As16()
	b = append(b, ip[:]...)
	return binary.LittleEndian.AppendUint16(b, a.Port())
}

func containsBytes(list []string, b []byte) bool {
	for _, v := range list {
		if v == string(b) {
			return true
		}
	}
	return false
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Snapshot is a consistent view of the store at one revision.
type Snapshot struct {
	Dialogs  []*Dialog // oldest first (by ID)
	Revision uint64
	Stats    Stats
	msgs     ring.Snapshot[Message]
	colOnce  sync.Once
	cols     *columns // the filter columns (Each), built on the first filter
	site     siteColumns
	// rows are which dialogs Dialogs are; ages, by dialog, how many
	// epochs before this snapshot's each was allocated (nil until a
	// snapshot of the store kept site columns); carry, the store's.
	rows    rowsOf
	ages    []uint32
	carry   *carrier
	derived derived // answers derived from every dialog (Derived)
}

// id is Dialogs[i].ID without reading the dialog: a store's snapshot
// holds the ring's dialogs in order, and a dialog's ID is its sequence
// number in the ring.
func (sn *Snapshot) id(i int) uint64 {
	if sn.rows.n != len(sn.Dialogs) { // not a store's snapshot
		return sn.Dialogs[i].ID
	}
	return sn.rows.first + uint64(i)
}

// Message returns the stored message with sequence number seq, if still
// kept. It is the store's own copy, read in place: do not modify it.
func (sn *Snapshot) Message(seq uint64) (*Message, bool) {
	m := sn.msgs.Ptr(seq)
	return m, m != nil
}

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
	// From here on, a dialog Add changes is copied first (slot.epoch).
	s.epoch++
	o := s.order.Snapshot()
	if s.live.broken || s.live.first != o.FirstSeq() || len(s.live.ds) != o.Len() {
		s.liveRebuild(o)
	}
	ds := slices.Clone(s.live.ds)
	var ages []uint32
	if s.carry.used.Load() { // a snapshot kept site columns: the next may carry them
		ages = make([]uint32, len(ds))
		for i, e := range s.live.epochs {
			ages[i] = uint32(min(s.epoch-e, math.MaxUint32))
		}
	}
	st := s.st
	st.Requests, st.Responses, st.Transports = s.requests.counts(), s.responses.counts(), s.transports.counts()
	st.Undecodable = maps.Clone(s.st.Undecodable)
	st.Dialogs = len(ds)
	st.MessagesEvicted = s.msgs.Stats().Evicted
	s.cache = &Snapshot{Dialogs: ds, Revision: s.st.Revision, Stats: st, msgs: s.msgs.Snapshot()}
	s.cache.site.share = s.lim.DialogBytes / columnShare
	s.cache.rows = rowsOf{first: o.FirstSeq(), epoch: s.epoch, n: len(ds)}
	s.cache.ages, s.cache.carry = ages, s.carry
	return s.cache
}

// liveAppend mirrors sl, just appended to the ring.
func (s *Store) liveAppend(sl *slot) {
	l := &s.live
	if len(l.ds) == 0 {
		l.first = sl.seq
	}
	if sl.seq != l.first+uint64(len(l.ds)) {
		l.broken = true
		return
	}
	l.ds, l.epochs = append(l.ds, sl.d), append(l.epochs, sl.epoch)
}

// liveSet mirrors sl's new dialog.
func (s *Store) liveSet(sl *slot) {
	l := &s.live
	if i := sl.seq - l.first; sl.seq >= l.first && i < uint64(len(l.ds)) {
		l.ds[i], l.epochs[i] = sl.d, sl.epoch
		return
	}
	l.broken = true
}

// liveEvict mirrors the ring's eviction of its oldest slot, seq.
func (s *Store) liveEvict(seq uint64) {
	l := &s.live
	if len(l.ds) == 0 || seq != l.first {
		l.broken = true
		return
	}
	l.ds[0] = nil // the dialog is no one's once no snapshot holds it
	l.ds, l.epochs, l.first = l.ds[1:], l.epochs[1:], l.first+1
}

// liveRebuild mirrors the ring afresh from o, its snapshot.
func (s *Store) liveRebuild(o ring.Snapshot[*slot]) {
	l := &s.live
	l.first, l.broken = o.FirstSeq(), false
	l.ds, l.epochs = make([]*Dialog, 0, o.Len()), make([]uint64, 0, o.Len())
	o.Range(0, func(_ uint64, sl *slot) bool {
		l.ds, l.epochs = append(l.ds, sl.d), append(l.epochs, sl.epoch)
		return true
	})
}

// Revision changes on every stored message or counted failure.
func (s *Store) Revision() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.Revision
}
