package rules

import (
	"fmt"
	"sync"
	"time"

	"fieldtap/services/ring"
)

// States of a rule.
const (
	StateOK      = "ok"
	StatePending = "pending" // the condition holds, not yet for its `for`
	StateFiring  = "firing"
	StateNoData  = "no_data" // the population guard is not met
)

// MaxSamples bounds the samples a rule keeps for its window; a window
// that needs more (a short tick, a long window) keeps the newest ones and
// Verdict.Trimmed counts those let go early.
const MaxSamples = 1024

// HistoryLen bounds the state changes the engine keeps: 64 rules
// changing every tick (5 s) fill it in 80 s, one flapping rule in over
// an hour; the changes let go are counted (History).
const HistoryLen = 1024

// Reading is one look at a rule's figure.
type Reading struct {
	// OK is false when the figure cannot be read now (Why says why):
	// the evaluation adds no sample.
	OK    bool
	Why   string
	Value float64
	// Population is, for a kind the reader measures over the window
	// itself (windowed), the records Value stands on (call attempts,
	// streams, dialogs): the population guard counts them.
	Population int
	// Evidence is the figures behind Value and the MCP tool with the
	// arguments that show them.
	Evidence Evidence
}

// Evidence backs a verdict.
type Evidence struct {
	Figures map[string]float64 `json:"figures"`
	Tool    string             `json:"tool"`
	Args    map[string]string  `json:"args"`
}

// Reader reads one rule's figure at now.
type Reader interface {
	Read(r Rule, now time.Time) Reading
}

// Verdict is a rule's state now.
type Verdict struct {
	Rule        Rule
	State       string
	Since       time.Time // when State began; zero before the first tick
	Value       float64   // the windowed value; meaningful when HasValue
	HasValue    bool
	Samples     int    // samples kept for the window (a running total keeps one before it)
	Why         string // for no_data: what is missing
	Evidence    Evidence
	Transitions uint64 // state changes since start
	Trimmed     uint64 // samples let go before leaving the window (MaxSamples)
}

// Transition is one state change, the engine's output.
type Transition struct {
	At       time.Time
	From, To string
	Verdict  Verdict
}

type sample struct {
	at time.Time
	v  float64
}

type ruleState struct {
	v       Verdict
	samples []sample
	held    time.Time // when the condition began to hold; zero when it does not
}

// Engine evaluates rules; safe for concurrent Tick, Verdicts and
// History.
type Engine struct {
	read  Reader
	mu    sync.Mutex
	rules []*ruleState
	// history keeps the newest HistoryLen state changes, bounded by
	// count: a change holds the rule and its evidence figures, a few
	// hundred bytes.
	history *ring.Ring[Transition]
}

// New makes an engine over rules, which must pass CheckAll. Every rule
// starts in no_data: nothing has been read yet.
func New(rules []Rule, read Reader) (*Engine, error) {
	if err := CheckAll(rules); err != nil {
		return nil, err
	}
	h, err := ring.New[Transition](ring.Limits{Items: HistoryLen, Bytes: HistoryLen}, nil)
	if err != nil {
		return nil, err
	}
	e := &Engine{read: read, history: h}
	for _, r := range rules {
		e.rules = append(e.rules, &ruleState{v: Verdict{Rule: r, State: StateNoData, Why: "not evaluated yet"}})
	}
	return e, nil
}

// Tick evaluates every rule at now and returns the state changes.
func (e *Engine) Tick(now time.Time) []Transition {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Transition
	for _, s := range e.rules {
		from := s.v.State
		s.eval(e.read.Read(s.v.Rule, now), now)
		if s.v.State != from {
			s.v.Since = now
			s.v.Transitions++
			tr := Transition{At: now, From: from, To: s.v.State, Verdict: s.v}
			out = append(out, tr)
			e.history.Append(tr) // bounded by count alone: never refused
		} else if s.v.Since.IsZero() {
			s.v.Since = now
		}
	}
	return out
}

func (s *ruleState) eval(rd Reading, now time.Time) {
	r := s.v.Rule
	if rd.OK {
		if len(s.samples) == MaxSamples {
			s.samples = s.samples[1:]
			s.v.Trimmed++
		}
		s.samples = append(s.samples, sample{now, rd.Value})
		s.v.Evidence = rd.Evidence
	}
	cut := 0
	for cut < len(s.samples) && now.Sub(s.samples[cut].at) > r.Window {
		cut++
	}
	// A running total needs the sample just before the window to know
	// its increase within it.
	if counter(r.Kind) && cut > 0 {
		cut--
	}
	s.samples = s.samples[cut:]
	n, guard := len(s.samples), max(r.MinSamples, 1)
	if counter(r.Kind) {
		guard = max(r.MinSamples, 2)
	}
	if windowed(r.Kind) {
		// The reading measured the window: only it counts, and its
		// population is what the guard weighs.
		s.samples, n = s.samples[len(s.samples)-min(len(s.samples), 1):], rd.Population
		if !rd.OK {
			s.samples, n = s.samples[:0], 0
		}
	}
	s.v.Samples = n
	if n < guard {
		s.v.State, s.v.HasValue, s.held = StateNoData, false, time.Time{}
		s.v.Why = rd.Why
		if rd.OK || s.v.Why == "" {
			s.v.Why = "fewer samples in the window than the population guard"
		}
		if rd.OK && windowed(r.Kind) {
			s.v.Why = fmt.Sprintf("%d %s in the window, fewer than the population guard %d", n, population(r.Kind), guard)
		}
		return
	}
	s.v.Why = ""
	s.v.Value, s.v.HasValue = s.value(), true
	holds := s.v.Value > r.Value
	if r.Op == Below {
		holds = s.v.Value < r.Value
	}
	switch {
	case !holds:
		s.v.State, s.held = StateOK, time.Time{}
	case s.held.IsZero():
		s.held = now
		fallthrough
	default:
		if now.Sub(s.held) >= r.For {
			s.v.State = StateFiring
		} else {
			s.v.State = StatePending
		}
	}
}

// value is the window's figure: a running total's increase (a total
// that went down restarted, so the increase is its newest value, unless
// the kind never restarts), or the newest level.
func (s *ruleState) value() float64 {
	last := s.samples[len(s.samples)-1].v
	if !counter(s.v.Rule.Kind) {
		return last
	}
	inc := 0.0
	for i := 1; i < len(s.samples); i++ {
		d := s.samples[i].v - s.samples[i-1].v
		if d < 0 && restarts(s.v.Rule.Kind) {
			d = s.samples[i].v
		}
		d = max(d, 0)
		inc += d
	}
	return inc
}

// Verdicts returns every rule's verdict in configuration order.
func (e *Engine) Verdicts() []Verdict {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Verdict, len(e.rules))
	for i, s := range e.rules {
		out[i] = s.v
	}
	return out
}

// History is the kept state changes, oldest first, each numbered from 0
// since start: the first kept number is how many were let go, the end
// number how many there have been.
func (e *Engine) History() ring.Snapshot[Transition] {
	return e.history.Snapshot()
}
