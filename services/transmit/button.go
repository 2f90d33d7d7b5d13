package transmit

import (
	"context"
	"crypto/sha256"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Button is the board's confirm button, a push button beside the key
// switch, and the light that shows which plan waits for it. It is the
// consent no client can write: elicitation asks through the client and
// proves a person only as far as the client is honest; a press proves a
// person at the box.
//
// AwaitPress shows blinks on the status light (each number a group of
// blinks) and waits for a fresh press: a release-to-press change after the
// call began, so a button held or stuck down confirms nothing. It calls
// armed (when not nil) once a press from then on counts, before it
// waits. It returns the press time, or ctx's error when ctx ends first;
// the light goes back to what it showed before either way.
type Button interface {
	AwaitPress(ctx context.Context, blinks []int, armed func()) (time.Time, error)
}

// Button code and wait bounds.
const (
	// DefaultButtonWait is how long an execution waits for the press:
	// long enough to walk to the box and read the light, short enough
	// that an unattended box does not hold a plan.
	DefaultButtonWait = 30 * time.Second
	// MinButtonWait and MaxButtonWait bound Options.ButtonWait.
	MinButtonWait = time.Second
	MaxButtonWait = 5 * time.Minute
	// buttonDigits and buttonBase make the code: three groups of one to
	// four blinks, 64 codes, each group short enough to count at a glance.
	buttonDigits = 3
	buttonBase   = 4
)

// ButtonCode is the blink pattern for planID: buttonDigits groups of 1 to
// buttonBase blinks, from the SHA-256 of the id (256 is a multiple of
// buttonBase, so every code is equally likely). The plan, the question
// and transmit_status print it as "2-4-1", so a person matches the light
// on the box to the plan they read.
func ButtonCode(planID string) []int {
	h := sha256.Sum256([]byte(planID))
	code := make([]int, buttonDigits)
	for i := range code {
		code[i] = 1 + int(h[i])%buttonBase
	}
	return code
}

// ButtonCodeText spells a code as the box prints it: "2-4-1".
func ButtonCodeText(code []int) string {
	parts := make([]string, len(code))
	for i, n := range code {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, "-")
}

// ButtonPress is a recorded press, in the audit and the execute result.
type ButtonPress struct {
	Code     string    `json:"code"`
	Pressed  time.Time `json:"pressed"`
	WaitedMS int64     `json:"waited_ms"`
}

// ButtonWaiting is the plan waiting for the button now.
type ButtonWaiting struct {
	// PlanID is shown only to the plan's owner.
	PlanID string
	Code   string
	Since  time.Time
	Until  time.Time
	owner  Owner
}

// awaitButton is the button gate: one plan at a time waits up to
// ButtonWait for a press, its code on the status light; the wait and the
// press are audited.
func (s *Service) awaitButton(ctx context.Context, c Caller, p *Plan) (*ButtonPress, *Refusal) {
	if s.o.Button == nil {
		return nil, s.buttonAbsent()
	}
	if !s.buttonMu.TryLock() {
		return nil, refuseCode(GateButton, CodeButtonBusy, "wait until the other plan is pressed for or times out, then run this one again",
			"another plan is waiting for the confirm button; the box asks for one press at a time")
	}
	defer s.buttonMu.Unlock()
	code := ButtonCode(p.ID)
	text := ButtonCodeText(code)
	start := s.o.Now()
	s.audit(ctx, Record{Event: EventButtonWait, Message: "status LED blinks " + text + " for up to " + s.o.ButtonWait.String()}, c, p)
	wctx, cancel := context.WithTimeout(ctx, s.o.ButtonWait)
	defer cancel()
	defer func() {
		s.mu.Lock()
		s.waiting = nil
		s.mu.Unlock()
	}()
	// transmit_status shows the wait only once the button counts presses:
	// shown earlier (before the audit's write, or the button's first
	// read), a press made on seeing it could be missed.
	at, err := s.o.Button.AwaitPress(wctx, code, func() {
		s.mu.Lock()
		s.waiting = &ButtonWaiting{PlanID: p.ID, Code: text, Since: start, Until: start.Add(s.o.ButtonWait), owner: p.owner}
		s.mu.Unlock()
	})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, refuseCode(GateButton, CodeButtonTimeout, "nothing was sent; run the plan again", "the call ended while waiting for the confirm button: %v", ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		return nil, refuseCode(GateButton, CodeButtonTimeout, "nothing was sent; run the plan again and "+s.o.Hints.press()+" while the status LED blinks "+text,
			"nobody pressed the confirm button within %v", s.o.ButtonWait)
	default:
		return nil, refuseCode(GateButton, CodeButtonFailed, "check the board's confirm input; nothing was sent", "the confirm button could not be read: %v", err)
	}
	bp := &ButtonPress{Code: text, Pressed: at, WaitedMS: at.Sub(start).Milliseconds()}
	s.audit(ctx, Record{Event: EventButtonPressed, Button: bp}, c, p)
	return bp, nil
}

func (s *Service) buttonAbsent() *Refusal {
	return refuseCode(GateButton, CodeButtonAbsent, s.o.Hints.buttonAbsent(),
		"transmit.require_button is set and this board has no confirm button")
}
