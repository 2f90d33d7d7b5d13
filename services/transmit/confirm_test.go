package transmit

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// confirmRig is openRig with an HTTP caller (token and session), a fake
// clock, and a plan that needs a person (raw frames: actuate class).
type confirmRig struct {
	*rig
	s    *Service
	now  time.Time
	plan *Plan
	// call is the tool call the first question was asked on.
	call Confirmation
}

func newConfirmRig(t *testing.T) *confirmRig {
	t.Helper()
	r := openRig(t)
	r.caller = httpCaller("tech", "session-1")
	cr := &confirmRig{rig: r, now: time.Unix(1_800_000_000, 0)}
	r.o.Now = func() time.Time { return cr.now }
	var err error
	if cr.s, err = New(r.o); err != nil {
		t.Fatal(err)
	}
	digest, _ := ArgsDigest(map[string]any{"port": "can0", "frames": []any{map[string]any{"id": "18EA00F9", "data": "ECFE00"}}, "dry_run": false, "ack_active": true})
	cr.call = Confirmation{CanAsk: true, Tool: "can_send", ArgsDigest: digest}
	if cr.plan, err = cr.s.Plan(context.Background(), r.caller, CANSend("can0", r.spec.Frames)); err != nil {
		t.Fatal(err)
	}
	return cr
}

// ask makes the first call and returns the state it handed out.
func (cr *confirmRig) ask(t *testing.T, c Caller, call Confirmation) string {
	t.Helper()
	out, err := cr.s.Execute(context.Background(), c, cr.plan.ID, true, call)
	if err != nil || out.Status != StatusNeedsConfirmation || out.Token == "" || !strings.Contains(out.Question, "18EA00F9 [3] EC FE 00") {
		t.Fatalf("first call: %+v, %v", out, err)
	}
	if out.FramesSHA256 != cr.plan.Hash || !out.ConfirmExpires.Equal(cr.now.Add(ConfirmTTL)) {
		t.Errorf("question: frames %s expires %v, want %s and %v", out.FramesSHA256, out.ConfirmExpires, cr.plan.Hash, cr.now.Add(ConfirmTTL))
	}
	if cr.w.count() != 0 {
		t.Fatal("a frame went out before the answer")
	}
	return out.Token
}

// answer returns a copy of the first call carrying state and reply.
func (cr *confirmRig) answer(state string, reply Reply) Confirmation {
	c := cr.call
	c.Token, c.Reply = state, reply
	return c
}

func refusalCode(err error) (gate, code string) {
	var ref *Refusal
	if errors.As(err, &ref) {
		return ref.Gate, ref.Code
	}
	return "", ""
}

// TestConfirmationIsBound runs every way an answer can be forged, moved,
// replayed or outlived, with every other gate open, against the accept
// that works. Each refusal sends nothing; those that void the question or
// answer no close the plan.
func TestConfirmationIsBound(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// reply is the second call, given the first call's state; it
		// returns the caller and the planID it names.
		reply  func(cr *confirmRig, state string) (Caller, string, Confirmation)
		code   string // "" means sent
		closes bool   // the plan can no longer run
	}{
		{name: "accept", reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			return cr.caller, cr.plan.ID, cr.answer(st, ReplyAccept)
		}},
		{name: "accept naming no plan (the state names it)", reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			return cr.caller, "", cr.answer(st, ReplyAccept)
		}},
		{name: "decline", code: CodeConfirmDeclined, closes: true, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			return cr.caller, cr.plan.ID, cr.answer(st, ReplyDecline)
		}},
		{name: "cancel", code: CodeConfirmCancelled, closes: true, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			return cr.caller, cr.plan.ID, cr.answer(st, ReplyCancel)
		}},
		{name: "state and no answer", code: CodeConfirmNoAnswer, closes: true, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			return cr.caller, cr.plan.ID, cr.answer(st, ReplyNone)
		}},
		{name: "made-up state", code: CodeConfirmForged, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			return cr.caller, cr.plan.ID, cr.answer("ftx1:"+cr.plan.ID+":q-0123", ReplyAccept)
		}},
		{name: "well-formed state, wrong MAC", code: CodeConfirmForged, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			i := strings.LastIndex(st, stateSep)
			return cr.caller, cr.plan.ID, cr.answer(st[:i+1]+base64.RawURLEncoding.EncodeToString(make([]byte, macBytes)), ReplyAccept)
		}},
		{name: "expiry pushed out", code: CodeConfirmForged, closes: true, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			p, _ := parseState(st)
			p.expires = p.expires.Add(time.Hour)
			return cr.caller, cr.plan.ID, cr.answer(p.String(), ReplyAccept)
		}},
		{name: "moved to another tool", code: CodeConfirmMoved, closes: true, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			c := cr.answer(st, ReplyAccept)
			c.Tool = "j1939_request"
			return cr.caller, "", c
		}},
		{name: "moved to other arguments", code: CodeConfirmMoved, closes: true, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			c := cr.answer(st, ReplyAccept)
			c.ArgsDigest, _ = ArgsDigest(map[string]any{"pgn": 65260.0})
			return cr.caller, "", c
		}},
		{name: "moved onto another plan", code: CodeConfirmMoved, closes: true, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			other, _ := cr.s.Plan(ctx, cr.caller, cr.spec)
			return cr.caller, other.ID, cr.answer(st, ReplyAccept)
		}},
		{name: "another session of the token", code: CodeConfirmOtherOwner, closes: true, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			return httpCaller("tech", "session-2"), "", cr.answer(st, ReplyAccept)
		}},
		{name: "another token", code: CodeConfirmOtherOwner, closes: true, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			return httpCaller("intruder", "session-1"), "", cr.answer(st, ReplyAccept)
		}},
		{name: "answered after it expired", code: CodeConfirmExpired, reply: func(cr *confirmRig, st string) (Caller, string, Confirmation) {
			cr.now = cr.now.Add(ConfirmTTL)
			return cr.caller, cr.plan.ID, cr.answer(st, ReplyAccept)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := newConfirmRig(t)
			st := cr.ask(t, cr.caller, cr.call)
			c, id, conf := tc.reply(cr, st)
			out, err := cr.s.Execute(ctx, c, id, true, conf)
			if tc.code == "" {
				if err != nil || out.Status != StatusSent || cr.w.count() != 1 {
					t.Fatalf("%+v, %v, %d frames", out, err, cr.w.count())
				}
				// One use: the same answer again is a replay.
				if _, err := cr.s.Execute(ctx, c, id, true, conf); !hasCode(err, CodeConfirmReplayed) || cr.w.count() != 1 {
					t.Errorf("the answer replayed: %v, %d frames", err, cr.w.count())
				}
				return
			}
			if g, code := refusalCode(err); g != GateConfirmation || code != tc.code || cr.w.count() != 0 {
				t.Fatalf("err = %v (gate %s code %s), %d frames; want gate confirmation, %s", err, g, code, cr.w.count(), tc.code)
			}
			if got := cr.audit.events(); got[len(got)-1] != EventRefused+":"+GateConfirmation {
				t.Errorf("audit %v", got)
			}
			// The plan's owner asks again: a closed plan refuses, an open one is asked afresh.
			_, err = cr.s.Execute(ctx, cr.caller, cr.plan.ID, true, cr.call)
			if tc.closes {
				if !hasCode(err, CodePlanEnded) {
					t.Errorf("after %s the plan still runs: %v", tc.name, err)
				}
				if p := cr.s.Get(cr.caller.Owner(), cr.plan.ID); p == nil || p.Ended == "" {
					t.Errorf("transmit_plans shows %+v, want it ended", p)
				}
			} else if err != nil {
				t.Errorf("after %s the owner cannot be asked again: %v", tc.name, err)
			}
			if cr.w.count() != 0 {
				t.Error("sent")
			}
		})
	}
}

func hasCode(err error, code string) bool {
	var ref *Refusal
	var e *Error
	return errors.As(err, &ref) && ref.Code == code || errors.As(err, &e) && e.Code == code
}

// TestUnansweredConfirmationsAreBounded: a session may leave at most
// MaxConfirmPerOwner questions unanswered, a token MaxConfirmPerToken;
// others still get asked, and after ConfirmTTL the slots are free.
func TestUnansweredConfirmationsAreBounded(t *testing.T) {
	ctx := context.Background()
	cr := newConfirmRig(t)
	plan := func(c Caller) string {
		p, err := cr.s.Plan(ctx, c, CANSend("can0", cr.spec.Frames))
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	askFor := func(c Caller) error {
		_, err := cr.s.Execute(ctx, c, plan(c), true, cr.call)
		return err
	}
	greedy := httpCaller("tech", "greedy")
	for i := range MaxConfirmPerOwner {
		if err := askFor(greedy); err != nil {
			t.Fatalf("question %d: %v", i, err)
		}
	}
	if err := askFor(greedy); !hasCode(err, CodeConfirmLimit) {
		t.Fatalf("question %d of one session: %v, want %s", MaxConfirmPerOwner+1, err, CodeConfirmLimit)
	}
	if err := askFor(httpCaller("other", "s")); err != nil {
		t.Fatalf("another token is crowded out: %v", err)
	}
	// The token's other sessions fill the token's share.
	for i := 1; i < MaxConfirmPerToken/MaxConfirmPerOwner; i++ {
		for range MaxConfirmPerOwner {
			if err := askFor(httpCaller("tech", "s"+string(rune('a'+i)))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := askFor(httpCaller("tech", "one-more")); !hasCode(err, CodeConfirmLimit) {
		t.Fatalf("a token over its share: %v", err)
	}
	if got := len(cr.s.Confirmations(greedy.Owner())); got != MaxConfirmPerOwner {
		t.Errorf("greedy lists %d questions, want %d", got, MaxConfirmPerOwner)
	}
	cr.now = cr.now.Add(ConfirmTTL)
	if err := askFor(greedy); err != nil {
		t.Fatalf("after %v the session is still full: %v", ConfirmTTL, err)
	}
	if st := cr.s.Status(greedy.Owner()); st.Confirmations.Expired != uint64(MaxConfirmPerToken+1) || st.Confirmations.Refused != 2 || len(st.Confirmations.Yours) != 1 {
		t.Errorf("confirmations %+v", st.Confirmations)
	}
	if cr.w.count() != 0 {
		t.Error("sent")
	}
}

// TestIssueRedeemCancel drives the confirmation API the MCP layer can
// call on its own: issue for (owner, plan, tool, args), redeem the
// answer, list and cancel. Cancelling closes the plan; another caller can
// neither see nor cancel the question.
func TestIssueRedeemCancel(t *testing.T) {
	ctx := context.Background()
	cr := newConfirmRig(t)
	sub := Subject{PlanID: cr.plan.ID, Tool: cr.call.Tool, ArgsDigest: cr.call.ArgsDigest}
	q, err := cr.s.IssueConfirmation(ctx, cr.caller, sub)
	if err != nil || q.PlanID != cr.plan.ID || q.State == "" || !strings.Contains(q.Text, "18EA00F9") {
		t.Fatalf("issue: %+v, %v", q, err)
	}
	if got := cr.s.Confirmations(cr.caller.Owner()); len(got) != 1 || got[0].ID != q.ID || got[0].Tool != "can_send" {
		t.Fatalf("list %+v", got)
	}
	if got := cr.s.Confirmations(httpCaller("intruder", "x").Owner()); len(got) != 0 {
		t.Fatalf("another caller lists %+v", got)
	}
	if err := cr.s.CancelConfirmation(ctx, httpCaller("intruder", "x"), q.ID); !hasCode(err, CodeNoSuchConfirm) {
		t.Fatalf("another caller cancels: %v", err)
	}
	// Redeem: accept returns the plan id, once.
	id, err := cr.s.RedeemConfirmation(ctx, cr.caller, Subject{Tool: sub.Tool, ArgsDigest: sub.ArgsDigest}, q.State, ReplyAccept)
	if err != nil || id != cr.plan.ID {
		t.Fatalf("redeem: %q, %v", id, err)
	}
	if _, err := cr.s.RedeemConfirmation(ctx, cr.caller, sub, q.State, ReplyAccept); !hasCode(err, CodeConfirmReplayed) {
		t.Fatalf("second redeem: %v", err)
	}
	// Cancel a fresh question: the plan closes.
	q, _ = cr.s.IssueConfirmation(ctx, cr.caller, sub)
	if err := cr.s.CancelConfirmation(ctx, cr.caller, q.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := cr.s.RedeemConfirmation(ctx, cr.caller, sub, q.State, ReplyAccept); !hasCode(err, CodeConfirmReplayed) {
		t.Errorf("redeem after cancel: %v", err)
	}
	if _, err := cr.s.Execute(ctx, cr.caller, cr.plan.ID, true, cr.call); !hasCode(err, CodePlanEnded) {
		t.Errorf("run after cancel: %v", err)
	}
	if ev := cr.audit.events(); !strings.Contains(strings.Join(ev, ","), EventConfirmCancelled) {
		t.Errorf("audit %v lacks the cancel", ev)
	}
	if cr.w.count() != 0 {
		t.Error("sent")
	}
}

// TestStatesDieWithTheSecret: a state from one daemon does not verify in
// the next (a fresh secret per process), nor under a given other secret.
func TestStatesDieWithTheSecret(t *testing.T) {
	cr := newConfirmRig(t)
	st := cr.ask(t, cr.caller, cr.call)
	o := cr.o
	o.Secret = make([]byte, SecretBytes)
	next, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := next.RedeemConfirmation(context.Background(), cr.caller, Subject{Tool: cr.call.Tool, ArgsDigest: cr.call.ArgsDigest}, st, ReplyAccept); !hasCode(err, CodeConfirmForged) {
		t.Fatalf("a state under another secret: %v", err)
	}
	o.Secret = make([]byte, 8)
	if _, err := New(o); err == nil {
		t.Error("an 8-byte secret was accepted")
	}
}

func TestArgsDigest(t *testing.T) {
	a, _ := ArgsDigest(map[string]any{"pgn": 65260.0, "port": "can0", "dry_run": false})
	b, _ := ArgsDigest(map[string]any{"dry_run": false, "port": "can0", "pgn": 65260.0})
	c, _ := ArgsDigest(map[string]any{"dry_run": false, "port": "can0", "pgn": 65261.0})
	if a != b || a == c || len(a) != 64 {
		t.Errorf("digests %s %s %s", a, b, c)
	}
	if _, err := ArgsDigest(map[string]any{"f": func() {}}); err == nil {
		t.Error("an unencodable argument digested")
	}
}

// FuzzParseState: the request state comes back from the client, so any
// bytes may arrive. Parsing never panics, and whatever parses writes back
// to the same string.
func FuzzParseState(f *testing.F) {
	f.Add("ftc1.tx-0123456789abcdef.0123456789abcdef0123456789abcdef.1800000060000." + base64.RawURLEncoding.EncodeToString(make([]byte, macBytes)))
	f.Add("ftx1:tx-0123456789abcdef:q-0123")
	f.Add("ftc1.....")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		st, err := parseState(s)
		if err != nil {
			return
		}
		if st.String() != s {
			t.Errorf("%q parses and writes back as %q", s, st.String())
		}
	})
}
