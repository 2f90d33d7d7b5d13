package sip

import (
	"net/netip"
	"sync/atomic"
	"time"
)

// Dialog states.
const (
	StateCalling    = "calling"    // INVITE sent, no response yet
	StateProceeding = "proceeding" // 1xx seen
	StateEarly      = "early"      // 18x seen
	StateAnswered   = "answered"   // 2xx to INVITE
	StateEnded      = "ended"      // BYE seen after an answer
	StateFailed     = "failed"     // final 3xx–6xx to INVITE
	StateCancelled  = "cancelled"  // a CANCEL and a 487 to the INVITE, in either order
	StateOpen       = "open"       // non-INVITE transaction waiting
	StateCompleted  = "completed"  // non-INVITE transaction with a 2xx
	StateRejected   = "rejected"   // non-INVITE transaction with a 3xx–6xx
)

// inlineWords is the words of each word list (messages, retransmission
// keys, transactions) in the Dialog's own arrays: those of an INVITE and
// its final answer.
const inlineWords = 2

// Per-dialog bounds on sender-chosen lists.
const (
	maxDialogMethods = 16 // distinct methods kept per dialog; more are counted
	maxDialogUAs     = 4  // distinct User-Agent/Server values kept
	maxParticipants  = 8  // distinct IP:port endpoints kept
	maxToTags        = 16 // distinct To tags (forks) kept
	// maxBranchBytes caps a kept Via branch: RFC 3261 branches are a
	// magic cookie and a few dozen characters; a longer one is a
	// sender's choice, and the first bytes still tell transactions apart.
	maxBranchBytes = 64
)

// Dialog is one Call-ID at one store revision. A *Dialog is immutable once
// published: an update publishes a new value, so readers holding an old
// one see a consistent dialog.
type Dialog struct {
	// The fields a filter reads most come first, in the dialog's first
	// 128 bytes: a filtered list reads 100,000 dialogs one after another,
	// and each cache line it touches is a miss the filter's call chain
	// cannot overlap (docs/benchmarks.md).
	ID          uint64 // never reused in a store's life
	FinalCode   int    // final response to the INVITE (or, without one, the first request), 0 if none
	State       string
	FromUser    string
	ToUser      string
	FirstMethod string // method of the first request seen
	Transport   string // udp, tcp, ws (of the first message)
	Methods     []string

	Rev uint64 // the store revision of this dialog's last change
	// figs memoises the dialog's share of the call figures (figures.go),
	// as problems does its problem set: figsRev is Rev+1 once figsWord,
	// figsDur and figsPDD hold them. A copy the store changes carries the
	// words over, but its Rev moves on, which makes them stale without
	// the store clearing them. Atomic, as problems. Beside Rev, which a
	// reader compares them with: group_dialogs reads them of every dialog.
	figsRev, figsWord, figsDur, figsPDD uint64
	// problems memoises which Problems aliases the dialog matches (bit i:
	// problemOrder[i]; problemsKnown once computed), written by the first
	// reader that asks: a published dialog never changes (the store
	// changes a copy, whose memo it clears), so find_problems looks at a
	// dialog's records once, not on every call. Atomic: readers of one
	// snapshot run concurrently. In the figures' cache line, which
	// warmMemos reads for both.
	problems uint32
	CallID   string
	Created  time.Time // first message
	Updated  time.Time // last message

	// HasInvite is set once an INVITE (request or response) was seen: the
	// dialog's call fields (State, FinalCode, the timings) then follow its
	// INVITE transactions, even when a REGISTER opened the Call-ID.
	HasInvite     bool
	MethodsOver   int            // distinct methods beyond maxDialogMethods
	FinalReason   string         // its reason phrase (sender text)
	ReasonHeader  string         // a Reason header (RFC 3326) seen on BYE/CANCEL/final (sender text)
	FromDisplay   string         // sender text
	ToDisplay     string         // sender text
	Src, Dst      netip.AddrPort // first request's endpoints
	Participants  []netip.AddrPort
	UserAgents    []string // User-Agent and Server values (sender text)
	Requests      int
	Responses     int
	Retransmits   int
	Transactions  int           // distinct transactions seen
	Txns          []Transaction // the first Limits.TransactionsPerDialog of them, in order of their first message
	TxnsShed      int           // transactions past the bound: counted, not kept
	AuthChallenge int           // 401/407 responses
	ToTags        []string
	// Correlation keys (find_correlated, get_call_tree), each bounded:
	// Session-ID UUIDs (checked hex, lowercased, nil left out), charging
	// vector icid-values and X- headers (sender text).
	SessionIDs   []string
	ICIDs        []string
	XHeaders     []XHeader
	CancelSeen   bool
	AckSeen      bool // an ACK for a 2xx (or any ACK if none distinguishable)
	ByeSeen      bool
	MessagesKept int // messages in msgs
	MessagesShed int // messages past the per-dialog cap, counted not kept

	InviteAt, RingAt, AnswerAt, ByeAt, FinalAt time.Time

	msgs   []uint64 // message ring sequence numbers, append-only
	txKeys []uint64 // hashes for retransmission detection, append-only
	txIDs  []uint64 // transaction hashes, append-only
	// The lists' first arrays, in the Dialog's own allocation: a short
	// dialog (an INVITE and its answer) keeps every list but its
	// User-Agents in them, a call its participants, methods and To tag.
	// With the 8-byte header the runtime puts before an object of
	// pointers past 512 bytes, the Dialog fills the 1,024-byte size
	// class. A list that outgrows its array grows as append would, the
	// word lists into arrays evicted dialogs gave back (Store.words);
	// dialogBytes charges only the arrays outside the Dialog, which for
	// every list is the capacities append gives from nil, less the first
	// ones: no dialog is charged more than before (account_test.go).
	msgsIn, keysIn, idsIn [inlineWords]uint64
	partsIn               [2]netip.AddrPort
	methodsIn             [4]string
	tagsIn                [1]string
	// listBytes is the heap bytes of the strings the lists above hold
	// (User-Agents, To tags, correlation keys, X- headers, transaction
	// branches and reason phrases), added as each is kept: the store
	// charges a dialog on every message, and reading every list for it
	// cost as much as the message's own update (docs/benchmarks.md).
	listBytes int
}

// warmSink keeps warm's reads from being optimised away.
var warmSink atomic.Uint64

// warm reads the hot fields of ds (the first 128 bytes and the user
// parts' bytes) in one tight loop, so their cache misses overlap before
// a filter evaluates the dialogs one by one, where each miss would wait
// for the one before (docs/benchmarks.md).
func warm(ds []*Dialog) {
	var s uint64
	for _, d := range ds {
		s += uint64(d.FinalCode)
		if d.FromUser != "" {
			s += uint64(d.FromUser[0])
		}
		if d.ToUser != "" {
			s += uint64(d.ToUser[0])
		}
	}
	warmSink.Add(s)
}

// Transaction is one SIP transaction of a dialog: a request (keyed by
// its top Via branch, CSeq number and method) and its responses.
type Transaction struct {
	Method      string // the request method (the CSeq method of its responses)
	Branch      string // top Via branch, an identifier (at most maxBranchBytes)
	CSeq        uint32
	InDialog    bool           // the request carried a To tag: a re-INVITE or an in-dialog request
	Src, Dst    netip.AddrPort // the requester and the request's destination
	Start       time.Time      // its first message
	Provisional time.Time      // first 1xx
	RingAt      time.Time      // first 180/183
	FinalAt     time.Time
	FinalCode   int    // first final response, 0 while none
	FinalReason string // its reason phrase (sender text)
	Requests    int    // the request and its retransmissions
	Responses   int
}

// CallMethod is the method the dialog's outcome is judged by: INVITE
// once one was seen, else the first request's.
func (d *Dialog) CallMethod() string {
	if d.HasInvite {
		return "INVITE"
	}
	return d.FirstMethod
}

// Messages returns the store sequence numbers of the dialog's kept
// messages, oldest first. The slice must not be modified.
func (d *Dialog) Messages() []uint64 { return d.msgs }

// PDD is post-dial delay: INVITE to the first 180/183, if both were seen.
func (d *Dialog) PDD() (time.Duration, bool) { return span(d.InviteAt, d.RingAt) }

// Setup is INVITE to its 2xx, if both were seen.
func (d *Dialog) Setup() (time.Duration, bool) { return span(d.InviteAt, d.AnswerAt) }

// Duration is the 2xx to the BYE, if both were seen.
func (d *Dialog) Duration() (time.Duration, bool) { return span(d.AnswerAt, d.ByeAt) }

func span(a, b time.Time) (time.Duration, bool) {
	if a.IsZero() || b.IsZero() || b.Before(a) {
		return 0, false
	}
	return b.Sub(a), true
}

// Message is one stored SIP message.
type Message struct {
	Seq            uint64 // store sequence number
	DialogID       uint64
	CallID         string
	Index          int // position among its dialog's kept messages, from 0: Dialog.Messages()[Index] is its Seq
	Time           time.Time
	Src, Dst       netip.AddrPort
	Transport      string
	Request        bool
	Method         string // request method, or the CSeq method of a response
	StatusCode     int
	CSeq           uint32
	Retransmission bool
	Raw            []byte // the whole message as captured (owned)
}
