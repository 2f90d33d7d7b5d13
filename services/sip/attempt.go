package sip

import (
	"time"

	"fieldtap/services/filter"
)

// Attempt is one call attempt of a dialog: an out-of-dialog INVITE with
// its authentication retries (RFC 3261 §22.2: the retry reuses the
// Call-ID with a higher CSeq), the re-INVITEs, ACKs, CANCELs and BYE
// that follow it. A Call-ID that opened with a REGISTER and then carries
// an INVITE has one attempt; one that re-dials after a failure has two.
type Attempt struct {
	N              int // 1-based, in the order the attempts started
	Invites        int // INVITE transactions in it (retries and re-INVITEs included)
	Start          time.Time
	RingAt         time.Time // first 180/183 of its initial INVITE(s)
	AnswerAt       time.Time // first 2xx
	FinalAt        time.Time
	ByeAt          time.Time
	FinalCode      int    // 0 while none; a 2xx sticks (a failed re-INVITE does not fail the call)
	FinalReason    string // sender text
	State          string // calling, early, answered, ended, failed, cancelled
	AuthChallenges int
	AckSeen        bool
	Cancelled      bool
}

// PDD, Setup and Duration are the attempt's timings, as Dialog's.
func (a *Attempt) PDD() (time.Duration, bool)      { return span(a.Start, a.RingAt) }
func (a *Attempt) Setup() (time.Duration, bool)    { return span(a.Start, a.AnswerAt) }
func (a *Attempt) Duration() (time.Duration, bool) { return span(a.AnswerAt, a.ByeAt) }

// Attempts returns d's call attempts from its kept transactions (nil for
// a dialog without an INVITE). Transactions past the per-dialog bound
// (d.TxnsShed) are not in them.
func (d *Dialog) Attempts() []Attempt { return d.AppendAttempts(nil) }

// AppendAttempts appends d's call attempts to out: a caller that looks at
// every dialog's in turn reuses one array instead of allocating one a
// dialog (at 100,000 dialogs, most of timeline's CPU was allocating and
// collecting them).
func (d *Dialog) AppendAttempts(out []Attempt) []Attempt {
	if !d.HasInvite {
		return out
	}
	first := len(out)
	var cur *Attempt
	for i := range d.Txns {
		tx := &d.Txns[i]
		if tx.Method == "INVITE" && (cur == nil || !tx.InDialog && !awaitingAuthRetry(cur)) {
			out = append(out, Attempt{N: len(out) - first + 1, Start: tx.Start, State: StateCalling})
			cur = &out[len(out)-1]
		}
		if cur == nil {
			continue // requests before the first INVITE (a REGISTER) are not the call's
		}
		cur.fold(tx)
	}
	return out
}

// awaitingAuthRetry: the attempt's last answer was a 401/407 challenge,
// so the next out-of-dialog INVITE is its retry with credentials.
func awaitingAuthRetry(a *Attempt) bool { return a.FinalCode == 401 || a.FinalCode == 407 }

func (a *Attempt) fold(tx *Transaction) {
	switch tx.Method {
	case "ACK":
		a.AckSeen = a.AckSeen || a.FinalCode >= 200 && a.FinalCode < 300
		return
	case "CANCEL":
		a.Cancelled = true
		// The CANCEL's transaction starts after the INVITE's, whose 487
		// may be folded already.
		if a.State == StateFailed && a.FinalCode == 487 {
			a.State = StateCancelled
		}
		return
	case "BYE":
		if a.ByeAt.IsZero() {
			a.ByeAt = tx.Start
		}
		if a.State == StateAnswered {
			a.State = StateEnded
		}
		return
	case "INVITE":
	default:
		return
	}
	// The INVITE that opened the attempt, and its retries, set its ring
	// time; a re-INVITE's 180 does not.
	initial := a.Invites == 0 || !tx.InDialog
	a.Invites++
	if !tx.InDialog && awaitingAuthRetry(a) {
		// The retry with credentials: the challenge was not the answer.
		a.FinalCode, a.FinalReason, a.FinalAt, a.State = 0, "", time.Time{}, StateCalling
	}
	if tx.FinalCode == 401 || tx.FinalCode == 407 {
		a.AuthChallenges++
	}
	answered := a.FinalCode >= 200 && a.FinalCode < 300
	if initial && a.RingAt.IsZero() && !tx.RingAt.IsZero() {
		a.RingAt = tx.RingAt
	}
	switch c := tx.FinalCode; {
	case c == 0:
		if !answered && a.FinalCode == 0 && !tx.RingAt.IsZero() {
			a.State = StateEarly
		}
	case c < 300:
		if a.AnswerAt.IsZero() {
			a.AnswerAt = tx.FinalAt
		}
		if !answered {
			a.FinalCode, a.FinalReason, a.FinalAt, a.State = c, tx.FinalReason, tx.FinalAt, StateAnswered
			if !a.ByeAt.IsZero() {
				a.State = StateEnded
			}
		}
	case !answered:
		a.FinalCode, a.FinalReason, a.FinalAt, a.State = c, tx.FinalReason, tx.FinalAt, StateFailed
		if c == 487 && a.Cancelled {
			a.State = StateCancelled
		}
	}
}

// AttemptRecord is one attempt seen through the dialog filter schema: the
// call fields (state, final_code, auth_challenges, the timings, has_ack,
// has_bye, cancelled) are the attempt's, the rest its dialog's.
type AttemptRecord struct {
	D *Dialog
	A *Attempt
}

// Field implements filter.Record.
func (r AttemptRecord) Field(i int) filter.Value {
	a := r.A
	switch i {
	case fState:
		return filter.Value{Str: a.State}
	case fFinalCode:
		return filter.Value{Num: float64(a.FinalCode), Null: a.FinalCode == 0}
	case fAuthChallenges:
		return filter.Value{Num: float64(a.AuthChallenges)}
	case fPDD:
		return msValue(a.PDD())
	case fSetup:
		return msValue(a.Setup())
	case fDuration:
		return msValue(a.Duration())
	case fHasAck:
		return filter.Value{Bool: a.AckSeen}
	case fHasBye:
		return filter.Value{Bool: !a.ByeAt.IsZero()}
	case fCancelled:
		return filter.Value{Bool: a.Cancelled}
	}
	return r.D.Field(i)
}

// Records returns what a per-attempt question is asked of: one record per
// call attempt, or the dialog itself when it carries no INVITE (or when
// every INVITE transaction was shed).
func Records(d *Dialog) []filter.Record {
	as := d.Attempts()
	if len(as) == 0 {
		return []filter.Record{d}
	}
	out := make([]filter.Record, len(as))
	for i := range as {
		out[i] = AttemptRecord{D: d, A: &as[i]}
	}
	return out
}
