package transmit

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// httpCaller is an HTTP caller with the transmit scope: the scope gate is
// open for it.
func httpCaller(token, session string) Caller {
	return Caller{Via: ViaMCP, Transport: TransportHTTP, TokenID: token, Session: session, Scopes: []string{"read", ScopeTransmit}}
}

// TestPlansBelongToTheirOwner: with every other gate open, a plan made by
// one token and session is invisible to every other owner, another
// session of the same token included: not listed, not read, not run. Its
// owner still runs it.
func TestPlansBelongToTheirOwner(t *testing.T) {
	ctx := context.Background()
	owner := httpCaller("tech", "s1")
	for _, tc := range []struct {
		name  string
		other Caller
	}{
		{name: "another token", other: httpCaller("intruder", "s1")},
		{name: "another session of the same token", other: httpCaller("tech", "s2")},
		{name: "no token (stdio)", other: Caller{Via: ViaMCP, Transport: "stdio"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openRig(t)
			s, _ := New(r.o)
			p, err := s.Plan(ctx, owner, r.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Plans(tc.other.Owner()); len(got) != 0 {
				t.Errorf("the other owner lists %d plans", len(got))
			}
			if s.Get(tc.other.Owner(), p.ID) != nil {
				t.Error("the other owner reads the plan")
			}
			_, err = s.Execute(ctx, tc.other, p.ID, true, Confirmation{})
			var ref *Refusal
			if !errors.As(err, &ref) || ref.Gate != GatePlan || ref.Code != CodeNoPlan || r.w.count() != 0 {
				t.Fatalf("the other owner's run: %v, %d frames; want refused by gate plan, %s", err, r.w.count(), CodeNoPlan)
			}
			if st := s.Status(tc.other.Owner()); st.YourPlans != 0 || len(st.Recent) != 1 || st.Recent[0].Code != CodeNoPlan {
				t.Errorf("the other owner's status: %d plans, recent %+v", st.YourPlans, st.Recent)
			}
			if got := s.Plans(owner.Owner()); len(got) != 1 || got[0].ID != p.ID || got[0].Executed {
				t.Fatalf("the owner lists %+v", got)
			}
			if _, err := s.Execute(ctx, owner, p.ID, true, Confirmation{}); err != nil || r.w.count() != 1 {
				t.Fatalf("the owner's run: %v, %d frames", err, r.w.count())
			}
		})
	}
}

// TestDryRunsOfOthersDoNotEvict is the measurement turned around:
// 64 dry runs by a second token leave the first token's plan in place and
// runnable; the second token's own plans are what it evicts.
func TestDryRunsOfOthersDoNotEvict(t *testing.T) {
	ctx := context.Background()
	r := openRig(t)
	s, _ := New(r.o)
	first, second := httpCaller("first", "a"), httpCaller("second", "b")
	p, _ := s.Plan(ctx, first, r.spec)
	for i := range 64 {
		if _, err := s.Plan(ctx, second, r.spec); err != nil {
			t.Fatalf("dry run %d: %v", i, err)
		}
	}
	if got := len(s.Plans(second.Owner())); got != MaxPlansPerOwner {
		t.Errorf("the second token keeps %d plans, want its quota %d", got, MaxPlansPerOwner)
	}
	if st := s.Status(first.Owner()); st.PlansEvicted != 64-MaxPlansPerOwner || st.YourPlans != 1 {
		t.Errorf("evicted %d (want %d, all the second token's), first token has %d plans", st.PlansEvicted, 64-MaxPlansPerOwner, st.YourPlans)
	}
	if _, err := s.Execute(ctx, first, p.ID, true, Confirmation{}); err != nil || r.w.count() != 1 {
		t.Fatalf("the first token's plan after the dry runs: %v, %d frames", err, r.w.count())
	}
}

// TestStoreBoundsRefuseNotEvict: a token at its quota across sessions,
// and a full store, refuse a new plan with a code; nobody else's plan goes.
func TestStoreBoundsRefuseNotEvict(t *testing.T) {
	ctx := context.Background()
	r := openRig(t)
	s, _ := New(r.o)
	fill := func(c Caller, n int) {
		t.Helper()
		for i := range n {
			if _, err := s.Plan(ctx, c, r.spec); err != nil {
				t.Fatalf("%s/%s plan %d: %v", c.TokenID, c.Session, i, err)
			}
		}
	}
	code := func(err error) string {
		var e *Error
		if errors.As(err, &e) {
			return e.Code
		}
		return fmt.Sprint(err)
	}
	// One token, two full sessions: its third session is refused.
	fill(httpCaller("t", "s1"), MaxPlansPerOwner)
	fill(httpCaller("t", "s2"), MaxPlansPerOwner)
	if _, err := s.Plan(ctx, httpCaller("t", "s3"), r.spec); code(err) != CodeTokenFull {
		t.Fatalf("third session of a full token: %v, want %s", err, CodeTokenFull)
	}
	// A full session still evicts only its own oldest.
	fill(httpCaller("t", "s1"), 1)
	if n1, n2 := len(s.Plans(httpCaller("t", "s1").Owner())), len(s.Plans(httpCaller("t", "s2").Owner())); n1 != MaxPlansPerOwner || n2 != MaxPlansPerOwner {
		t.Errorf("sessions hold %d and %d plans, want %d each", n1, n2, MaxPlansPerOwner)
	}
	// Other tokens fill the store; then a new token is refused.
	for tok := 0; len(s.Plans(Owner{})) == 0 && s.plansStored() < MaxPlans; tok++ {
		fill(httpCaller(fmt.Sprintf("u%d", tok), "x"), min(MaxPlansPerOwner, MaxPlans-s.plansStored()))
	}
	if _, err := s.Plan(ctx, httpCaller("late", "x"), r.spec); code(err) != CodePlansFull {
		t.Fatalf("a new token on a full store: %v, want %s", err, CodePlansFull)
	}
	if st := s.Status(Owner{}); st.Plans != MaxPlans || st.PlansRefused != 2 {
		t.Errorf("store %d plans, %d refused; want %d, 2", st.Plans, st.PlansRefused, MaxPlans)
	}
}

func (s *Service) plansStored() int {
	n, _, _, _ := s.plans.counts(s.o.Now())
	return n
}
