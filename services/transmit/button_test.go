package transmit

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// buttonRig is openRig with transmit.require_button and a fake button.
func buttonRig(t *testing.T) (*rig, *fakeButton, *Service) {
	t.Helper()
	r := openRig(t)
	b := newFakeButton()
	r.o.Button, r.o.RequireButton, r.o.ButtonWait = b, true, MinButtonWait
	s, err := New(r.o)
	if err != nil {
		t.Fatal(err)
	}
	return r, b, s
}

// execAsync runs Execute in the background.
func execAsync(s *Service, c Caller, id string, conf Confirmation) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.Execute(context.Background(), c, id, true, conf)
		done <- err
	}()
	return done
}

// TestButtonPressSends: with every other gate open and the button
// required, the execution shows the plan's code, waits, and sends only
// after the press; the press is in the audit and the result.
func TestButtonPressSends(t *testing.T) {
	r, b, s := buttonRig(t)
	p, _ := s.Plan(context.Background(), r.caller, r.spec)
	if p.ButtonCode == "" || !strings.Contains(p.Text(), "blinks "+p.ButtonCode) {
		t.Fatalf("plan code %q, text:\n%s", p.ButtonCode, p.Text())
	}
	done := make(chan *Outcome, 1)
	go func() {
		out, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	blinks := <-b.waits
	if ButtonCodeText(blinks) != p.ButtonCode || !slices.Equal(blinks, ButtonCode(p.ID)) {
		t.Errorf("the LED shows %v, the plan says %s", blinks, p.ButtonCode)
	}
	if st := s.Status(r.caller.Owner()); st.Button.Waiting == nil || st.Button.Waiting.PlanID != p.ID || st.Button.Waiting.Code != p.ButtonCode {
		t.Errorf("status while waiting: %+v", st.Button)
	}
	if st := s.Status(httpCaller("other", "x").Owner()); st.Button.Waiting == nil || st.Button.Waiting.PlanID != "" {
		t.Errorf("another owner sees the waiting plan: %+v", st.Button.Waiting)
	}
	if r.w.count() != 0 {
		t.Fatal("sent before the press")
	}
	at := time.Now()
	b.press <- at
	out := <-done
	if out == nil || out.Sent != 1 || r.w.count() != 1 || out.Button == nil || !out.Button.Pressed.Equal(at) || out.Button.Code != p.ButtonCode {
		t.Fatalf("outcome %+v, %d frames", out, r.w.count())
	}
	ev := strings.Join(r.audit.events(), ",")
	if !strings.Contains(ev, EventButtonWait+":,"+EventButtonPressed+":,"+EventSending+":") {
		t.Errorf("audit %s: want waiting, pressed, then sending", ev)
	}
	for _, rec := range r.audit.recs {
		if rec.Event == EventSending && (rec.Button == nil || !strings.Contains(rec.Confirm, "confirm button pressed")) {
			t.Errorf("the sending record does not name the press: %+v", rec)
		}
	}
	if s.Status(r.caller.Owner()).Button.Waiting != nil {
		t.Error("still waiting after the press")
	}
}

// TestButtonGate: without a press, nothing is sent; every way the button
// gate closes, with every other gate open.
func TestButtonGate(t *testing.T) {
	t.Run("nobody presses", func(t *testing.T) {
		r, b, s := buttonRig(t)
		p, _ := s.Plan(context.Background(), r.caller, r.spec)
		err := <-execAsync(s, r.caller, p.ID, Confirmation{})
		<-b.waits
		if !hasCode(err, CodeButtonTimeout) || r.w.count() != 0 {
			t.Fatalf("%v, %d frames", err, r.w.count())
		}
		if ev := r.audit.events(); ev[len(ev)-1] != EventRefused+":"+GateButton {
			t.Errorf("audit %v", ev)
		}
		// The plan is not spent: pressed the next time, it goes.
		done := execAsync(s, r.caller, p.ID, Confirmation{})
		<-b.waits
		b.press <- time.Now()
		if err := <-done; err != nil || r.w.count() != 1 {
			t.Fatalf("second run: %v, %d frames", err, r.w.count())
		}
	})
	t.Run("no button on the board", func(t *testing.T) {
		r := openRig(t)
		r.o.RequireButton = true
		s, _ := New(r.o)
		p, _ := s.Plan(context.Background(), r.caller, CANSend("can0", r.spec.Frames))
		// Refused before anybody is asked.
		out, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{CanAsk: true})
		if !hasCode(err, CodeButtonAbsent) || out != nil || r.w.count() != 0 {
			t.Fatalf("%+v, %v", out, err)
		}
		if st := s.Status(Owner{}); st.Ports[0].CanSend || st.Ports[0].CannotSend[0].Code != CodeButtonAbsent {
			t.Errorf("status %+v", st.Ports[0])
		}
	})
	t.Run("one wait at a time", func(t *testing.T) {
		r, b, s := buttonRig(t)
		p1, _ := s.Plan(context.Background(), r.caller, r.spec)
		p2, _ := s.Plan(context.Background(), r.caller, r.spec)
		first := execAsync(s, r.caller, p1.ID, Confirmation{})
		<-b.waits
		if _, err := s.Execute(context.Background(), r.caller, p2.ID, true, Confirmation{}); !hasCode(err, CodeButtonBusy) {
			t.Fatalf("second wait: %v", err)
		}
		b.press <- time.Now()
		if err := <-first; err != nil || r.w.count() != 1 {
			t.Fatalf("first: %v, %d frames", err, r.w.count())
		}
	})
	t.Run("key turned off during the wait", func(t *testing.T) {
		r, b, s := buttonRig(t)
		p, _ := s.Plan(context.Background(), r.caller, r.spec)
		done := execAsync(s, r.caller, p.ID, Confirmation{})
		<-b.waits
		r.arm.on.Store(false)
		b.press <- time.Now()
		if err := <-done; !isGate(err, GateArm) || r.w.count() != 0 {
			t.Fatalf("%v, %d frames", err, r.w.count())
		}
	})
	t.Run("the person declines in the client: no wait", func(t *testing.T) {
		r, b, s := buttonRig(t)
		p, _ := s.Plan(context.Background(), r.caller, CANSend("can0", r.spec.Frames))
		out, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{CanAsk: true})
		if err != nil || !strings.Contains(out.Question, "press the confirm button on the box while its status LED blinks "+p.ButtonCode) {
			t.Fatalf("%+v, %v", out, err)
		}
		if _, err := s.Execute(context.Background(), r.caller, p.ID, true, Confirmation{CanAsk: true, Reply: ReplyDecline, Token: out.Token}); !hasCode(err, CodeConfirmDeclined) {
			t.Fatal(err)
		}
		if len(b.waits) != 0 || r.w.count() != 0 {
			t.Error("waited for the button after a decline")
		}
	})
}

func TestButtonCode(t *testing.T) {
	seen := map[string]bool{}
	for range 2000 {
		c := ButtonCode(newID(planPrefix))
		if len(c) != buttonDigits {
			t.Fatalf("code %v", c)
		}
		for _, n := range c {
			if n < 1 || n > buttonBase {
				t.Fatalf("code %v: digit outside 1..%d", c, buttonBase)
			}
		}
		seen[ButtonCodeText(c)] = true
	}
	if len(seen) != 64 {
		t.Errorf("%d distinct codes in 2000 plans, want all 64", len(seen))
	}
	if !slices.Equal(ButtonCode("tx-0011223344556677"), ButtonCode("tx-0011223344556677")) {
		t.Error("a plan's code is not stable")
	}
	if _, err := New(Options{ButtonWait: time.Millisecond}); err == nil {
		t.Error("a 1 ms button wait was accepted")
	}
}

// lateButton takes a while to count presses (a board's first read of the
// line): it announces the wait, then arms when the test says.
type lateButton struct {
	entered, arm chan struct{}
	press        chan time.Time
}

func (b *lateButton) AwaitPress(ctx context.Context, _ []int, armed func()) (time.Time, error) {
	b.entered <- struct{}{}
	<-b.arm
	armed()
	select {
	case at := <-b.press:
		return at, nil
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// TestButtonWaitShownOnlyOnceArmed: transmit_status names the waiting
// plan only once the button counts presses; a person pressing on seeing
// it earlier would press for nothing (the emulated board's kill check
// lost one run in three to that).
func TestButtonWaitShownOnlyOnceArmed(t *testing.T) {
	r := openRig(t)
	b := &lateButton{entered: make(chan struct{}), arm: make(chan struct{}), press: make(chan time.Time, 1)}
	r.o.Button, r.o.RequireButton, r.o.ButtonWait = b, true, MaxButtonWait
	s, err := New(r.o)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Plan(context.Background(), r.caller, r.spec)
	done := execAsync(s, r.caller, p.ID, Confirmation{})
	<-b.entered
	if w := s.Status(r.caller.Owner()).Button.Waiting; w != nil {
		t.Fatalf("status shows %+v waiting before the button counts presses", w)
	}
	close(b.arm)
	for deadline := time.Now().Add(5 * time.Second); s.Status(r.caller.Owner()).Button.Waiting == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("status never showed the plan waiting once the button was armed")
		}
	}
	b.press <- time.Now()
	if err := <-done; err != nil || r.w.count() != 1 {
		t.Fatalf("%v, %d frames", err, r.w.count())
	}
}
