package transmit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Confirmation bounds. A question a person never answers must not hold
// anything for long, and one caller must not fill the table for others.
const (
	// ConfirmTTL is how long a question waits for its answer; the state
	// it handed out stops verifying then.
	ConfirmTTL = 60 * time.Second
	// MaxConfirmPerOwner bounds one session's unanswered questions: a
	// person answers one at a time, and an agent re-asking in a loop is
	// refused here (CodeConfirmLimit) rather than crowding others out.
	MaxConfirmPerOwner = 4
	// MaxConfirmPerToken bounds a token across its sessions.
	MaxConfirmPerToken = 4 * MaxConfirmPerOwner
	// MaxConfirm bounds the whole table.
	MaxConfirm = 4 * MaxConfirmPerToken
)

// Subject is what one confirmation is bound to: one plan, one tool call
// (its tool name and ArgsDigest of its arguments) and one owner. The MCP
// layer passes the same tool and digest when the client comes back with
// the answer; a state carried to another tool, other arguments, another
// plan or another session does not verify.
type Subject struct {
	Owner      Owner
	PlanID     string
	Tool       string
	ArgsDigest string
}

// ArgsDigest is how a confirmation binds a call's arguments: the SHA-256
// of their JSON, hex. Pass them as decoded from the request (mcp-go's
// GetRawArguments, a map): encoding/json writes map keys sorted, so the
// same call digests alike on its retry and any changed argument does not.
func ArgsDigest(args any) (string, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("transmit: arguments digest: %w", err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), nil
}

// Question is an issued confirmation: what to ask a person, and the
// request state the answer must come back with.
type Question struct {
	ID     string
	PlanID string
	Text   string
	// State goes to the client with the question (MCP requestState) and
	// comes back with the answer; it is a credential for one answer.
	State   string
	Asked   time.Time
	Expires time.Time
}

// Pending is one unanswered confirmation, as Confirmations lists it.
type Pending struct {
	ID      string
	PlanID  string
	Tool    string
	Asked   time.Time
	Expires time.Time
}

type pending struct {
	id    string
	sub   Subject
	st    state
	asked time.Time
}

// confirmations is the table of unanswered questions, keyed by nonce.
type confirmations struct {
	mu      sync.Mutex
	byNonce map[string]*pending
	expired uint64 // questions nobody answered within ConfirmTTL
	refused uint64 // questions not asked because a bound was reached
}

func newConfirmations() *confirmations { return &confirmations{byNonce: map[string]*pending{}} }

// sweep drops expired questions; the caller holds mu. Their plans stay:
// nobody agreed, so nothing is owed, and asking again is allowed.
func (t *confirmations) sweep(now time.Time) {
	for n, q := range t.byNonce {
		if !now.Before(q.st.expires) {
			delete(t.byNonce, n)
			t.expired++
		}
	}
}

// IssueConfirmation asks for a person's agreement to run the plan named by
// sub, for the call sub.Tool with arguments sub.ArgsDigest: it returns the
// question (the plan byte for byte) and the state its answer must come
// back with. The owner is always c's (sub.Owner is set from it); the plan
// must be that owner's and runnable.
// An earlier unanswered question about the same plan is replaced. Beyond
// MaxConfirmPerOwner, MaxConfirmPerToken or MaxConfirm unanswered
// questions it refuses (gate confirmation, CodeConfirmLimit). Execute
// calls it when a plan needs a confirmation; a caller that asks some other
// way may call it directly.
func (s *Service) IssueConfirmation(ctx context.Context, c Caller, sub Subject) (*Question, error) {
	sub.Owner = c.Owner()
	now := s.o.Now()
	p := s.plans.get(sub.Owner, sub.PlanID, now)
	if ref := planGate(p, sub.PlanID, s.o.PlanTTL); ref != nil {
		s.refused(ctx, c, p, sub.PlanID, ref)
		return nil, ref
	}
	q, ref := s.issue(ctx, c, p, sub, now)
	if ref != nil {
		s.refused(ctx, c, p, sub.PlanID, ref)
		return nil, ref
	}
	return q, nil
}

func (s *Service) issue(ctx context.Context, c Caller, p *Plan, sub Subject, now time.Time) (*Question, *Refusal) {
	t := s.confirm
	t.mu.Lock()
	t.sweep(now)
	var mine, token int
	for n, q := range t.byNonce {
		if q.sub.PlanID == p.ID {
			delete(t.byNonce, n) // one question per plan: the newest
			continue
		}
		if q.sub.Owner == sub.Owner {
			mine++
		}
		if q.sub.Owner.Token == sub.Owner.Token {
			token++
		}
	}
	var ref *Refusal
	switch {
	case mine >= MaxConfirmPerOwner:
		ref = refuseCode(GateConfirmation, CodeConfirmLimit, "answer the questions already asked, or wait for them to expire ("+ConfirmTTL.String()+")",
			"this session has %d unanswered confirmations, the most it may", MaxConfirmPerOwner)
	case token >= MaxConfirmPerToken:
		ref = refuseCode(GateConfirmation, CodeConfirmLimit, "answer the questions already asked, or wait for them to expire ("+ConfirmTTL.String()+")",
			"this token's sessions have %d unanswered confirmations, the most one token may", MaxConfirmPerToken)
	case len(t.byNonce) >= MaxConfirm:
		ref = refuseCode(GateConfirmation, CodeConfirmLimit, "try again within "+ConfirmTTL.String(),
			"%d confirmations of other callers are waiting, the most the box keeps", MaxConfirm)
	}
	if ref != nil {
		t.refused++
		t.mu.Unlock()
		return nil, ref
	}
	exp := now.Add(ConfirmTTL)
	if p.Expires.Before(exp) {
		exp = p.Expires
	}
	sub.PlanID = p.ID
	st := state{planID: p.ID, nonce: newNonce(), expires: exp.Truncate(time.Millisecond)}
	st.mac = st.sign(s.secret, sub)
	q := &pending{id: newID("cf-"), sub: sub, st: st, asked: now}
	t.byNonce[st.nonce] = q
	t.mu.Unlock()
	s.audit(ctx, Record{Event: EventAsked, CallTool: sub.Tool, Message: "expires " + st.expires.UTC().Format(time.RFC3339)}, c, p)
	return &Question{ID: q.id, PlanID: p.ID, Text: s.question(p), State: st.String(), Asked: now, Expires: st.expires}, nil
}

// RedeemConfirmation takes the client's answer to a question: the state it
// came back with and the reply. It returns the plan id when the answer is
// an accept of a question this box asked, on this call (sub.Tool and
// sub.ArgsDigest; sub.PlanID may be empty, and must match if not), to this
// caller, unexpired and not answered before. Any other answer is a
// *Refusal by gate confirmation with a code saying which: forged, moved,
// other owner, replayed, expired, declined, cancelled, no answer. A
// decline, cancel or missing answer ends the plan, and so does a genuine
// state presented on another call or by another caller (the question it
// answered is void). Each question is answered at most once. The owner
// is c's, as for IssueConfirmation. Execute calls it when the call
// carries a state.
func (s *Service) RedeemConfirmation(ctx context.Context, c Caller, sub Subject, st string, reply Reply) (string, error) {
	sub.Owner = c.Owner()
	id, ref := s.redeem(sub, st, reply, s.o.Now())
	if ref != nil {
		s.refused(ctx, c, s.plans.get(sub.Owner, ref.PlanID, s.o.Now()), ref.PlanID, ref)
		return "", ref
	}
	return id, nil
}

func (s *Service) redeem(sub Subject, raw string, reply Reply, now time.Time) (string, *Refusal) {
	const again = "make the plan again with a dry run, and answer the question the box then asks"
	st, err := parseState(raw)
	if err != nil {
		return "", refuseCode(GateConfirmation, CodeConfirmForged, again, "the confirmation was not issued by this box: %v", err)
	}
	t := s.confirm
	t.mu.Lock()
	q := t.byNonce[st.nonce]
	if q != nil && !hmac.Equal(q.st.mac, st.mac) {
		q = nil // a made-up MAC over a real nonce is not that question, and does not use it up
	}
	if q != nil {
		delete(t.byNonce, st.nonce) // whatever follows, this question has had its one answer
	}
	t.mu.Unlock()
	call := Subject{Owner: sub.Owner, PlanID: st.planID, Tool: sub.Tool, ArgsDigest: sub.ArgsDigest}
	var ref *Refusal
	switch {
	case q == nil && !st.verifies(s.secret, call):
		ref = refuseCode(GateConfirmation, CodeConfirmForged, again, "the confirmation for plan %s was not issued by this box for this call", st.planID)
	case q == nil && !now.Before(st.expires):
		ref = refuseCode(GateConfirmation, CodeConfirmExpired, again, "the confirmation for plan %s expired at %s", st.planID, st.expires.UTC().Format(time.RFC3339))
	case q == nil:
		ref = refuseCode(GateConfirmation, CodeConfirmReplayed, again, "the confirmation for plan %s was already answered once", st.planID)
	case st.planID != q.st.planID || !st.expires.Equal(q.st.expires):
		s.plans.end(q.sub.PlanID, EndedVoided)
		ref = refuseCode(GateConfirmation, CodeConfirmForged, again, "the confirmation for plan %s was altered: it is void, and so is the plan", q.sub.PlanID)
	case q.sub.Owner != sub.Owner:
		s.plans.end(st.planID, EndedVoided)
		ref = refuseCode(GateConfirmation, CodeConfirmOtherOwner, again, "the confirmation for plan %s belongs to another caller: it is void, and so is the plan", st.planID)
	case !q.st.verifies(s.secret, call) || (sub.PlanID != "" && sub.PlanID != st.planID):
		s.plans.end(st.planID, EndedVoided)
		ref = refuseCode(GateConfirmation, CodeConfirmMoved, again,
			"the confirmation for plan %s was issued for another call (tool %q), not this one: it is void, and so is the plan", st.planID, q.sub.Tool)
	case !now.Before(st.expires):
		ref = refuseCode(GateConfirmation, CodeConfirmExpired, again, "the confirmation for plan %s expired at %s", st.planID, st.expires.UTC().Format(time.RFC3339))
	case reply == ReplyAccept:
		return st.planID, nil
	case reply == ReplyDecline:
		s.plans.end(st.planID, EndedDeclined)
		ref = refuseCode(GateConfirmation, CodeConfirmDeclined, "nothing was sent; the plan is closed", "the person declined plan %s", st.planID)
	case reply == ReplyCancel:
		s.plans.end(st.planID, EndedCancelled)
		ref = refuseCode(GateConfirmation, CodeConfirmCancelled, "nothing was sent; the plan is closed", "the person cancelled plan %s", st.planID)
	default:
		s.plans.end(st.planID, EndedNoAnswer)
		ref = refuseCode(GateConfirmation, CodeConfirmNoAnswer, "nothing was sent; the plan is closed", "the call came back without the person's answer to plan %s", st.planID)
	}
	ref.PlanID = st.planID
	return "", ref
}

// Confirmations lists o's unanswered questions, oldest first.
func (s *Service) Confirmations(o Owner) []Pending {
	t := s.confirm
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep(s.o.Now())
	out := []Pending{}
	for _, q := range t.byNonce {
		if q.sub.Owner == o {
			out = append(out, Pending{ID: q.id, PlanID: q.sub.PlanID, Tool: q.sub.Tool, Asked: q.asked, Expires: q.st.expires})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Asked.Before(out[j].Asked) })
	return out
}

// CancelConfirmation withdraws the caller's unanswered question id (a
// client that gave up asking, or a person who said no elsewhere): the
// question can no longer be answered and its plan is closed, as after a
// cancel. Another caller's question is as unknown as one never asked
// (*Error CodeNoSuchConfirm).
func (s *Service) CancelConfirmation(ctx context.Context, c Caller, id string) error {
	o := c.Owner()
	t := s.confirm
	t.mu.Lock()
	t.sweep(s.o.Now())
	var q *pending
	for n, p := range t.byNonce {
		if p.id == id && p.sub.Owner == o {
			q = p
			delete(t.byNonce, n)
		}
	}
	t.mu.Unlock()
	if q == nil {
		return failure(CodeNoSuchConfirm, "Confirmations lists the ones still waiting", "no unanswered confirmation %q for this caller", id)
	}
	s.plans.end(q.sub.PlanID, EndedCancelled)
	p := s.plans.get(o, q.sub.PlanID, s.o.Now())
	s.audit(ctx, Record{Event: EventConfirmCancelled, CallTool: q.sub.Tool, Code: CodeConfirmCancelled, Message: "withdrawn before an answer"}, c, p)
	return nil
}

// counts is the table's size and counters for transmit_status.
func (t *confirmations) counts(now time.Time) (waiting int, expired, refused uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweep(now)
	return len(t.byNonce), t.expired, t.refused
}
