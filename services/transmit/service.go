package transmit

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Writer puts one frame on a bus. For CAN, id carries wire.CANEFF for a 29-bit
// id; for J1708, id is 0 and data is the whole message with its checksum.
// Only Service calls it.
type Writer interface {
	WriteFrame(ctx context.Context, id uint32, data []byte) error
}

// RxFrame is a frame seen on a port while a plan listens for its answer.
type RxFrame struct {
	Time time.Time
	ID   uint32 // with wire.CANEFF for 29-bit
	Data []byte
}

// Listener delivers the frames a port receives until stop is called.
type Listener interface {
	Listen(ctx context.Context) (frames <-chan RxFrame, stop func())
}

// Port is one bus the service can plan for and, when enabled, write to.
type Port struct {
	Name    string
	Medium  Medium
	Bitrate int // bit/s; 0 = unknown (no load estimate)
	// Transmit is the operator's per-port switch ([[port]] transmit = true).
	Transmit bool
	Writer   Writer     // nil: this port cannot transmit on this board
	Mode     ModeSetter // nil: the medium has no listen-only mode
	Listener Listener   // nil: answers are not collected
}

// Options configure a Service. Zero values are the safe defaults.
type Options struct {
	Ports []Port
	Arm   ArmSwitch // nil: never armed
	Audit Auditor   // nil: every send refused (GateAudit)
	// BundleLoaded says the MCP transmit bundle is loaded; MCP callers are
	// refused without it.
	BundleLoaded bool
	Rate         RateLimit
	// LoadCeiling refuses a plan when measured load plus the plan's added
	// load exceeds it (0..1); 0 means DefaultLoadCeiling.
	LoadCeiling float64
	// BusLoad returns the measured load of a port over the last second
	// and whether it is known.
	BusLoad func(port string) (float64, bool)
	PlanTTL time.Duration
	// Bus is the record of the ports' buses a plan is checked against;
	// nil: plans say the bus was not checked.
	Bus Recorded
	// Button is the board's confirm button; nil when it has none.
	Button Button
	// RequireButton (transmit.require_button) makes every execution wait
	// for a press of Button, up to ButtonWait (0: DefaultButtonWait).
	RequireButton bool
	ButtonWait    time.Duration
	// Hints name this board's controls in refusals.
	Hints Hints
	// Secret authenticates confirmation states (SecretBytes long); nil
	// draws a fresh one, so states die with the process, as plans do.
	Secret []byte
	Now    func() time.Time
}

// Defaults.
const (
	// DefaultLoadCeiling: J1939 buses are designed for well under 50 %
	// load; above 70 % added frames start delaying real traffic.
	DefaultLoadCeiling = 0.7
	// recentLen is how many outcomes the service remembers for
	// transmit_status, across owners (each owner sees its own).
	recentLen = 64
	// armPoll is how often Run reads the arm input to drop ports back
	// to listen-only on disarm.
	armPoll = 100 * time.Millisecond
)

// Caller says who asks. The MCP layer fills it from the session and the
// auth layer; the CLI says it is the terminal.
type Caller struct {
	Via       string   `json:"via"`       // ViaMCP or ViaCLI
	Transport string   `json:"transport"` // "stdio", "http", "terminal"
	TokenID   string   `json:"token_id,omitempty"`
	Scopes    []string `json:"scopes,omitempty"`
	// Session is the MCP session id over HTTP; with TokenID it is the
	// Owner of what the caller makes. The audit records a digest of it.
	Session string `json:"-"`
}

// Caller kinds.
const (
	ViaMCP        = "mcp"
	ViaCLI        = "cli"
	TransportHTTP = "http"
)

// Reply is a person's answer to a confirmation.
type Reply string

// Replies; ReplyNone means no answer has been given yet.
const (
	ReplyNone    Reply = ""
	ReplyAccept  Reply = "accept"
	ReplyDecline Reply = "decline"
	ReplyCancel  Reply = "cancel"
)

// Confirmation is what the caller knows about asking a person.
type Confirmation struct {
	// CanAsk: the client supports elicitation, or a terminal is attached.
	CanAsk bool
	Reply  Reply
	// Token is the request state Execute handed out with the question
	// (Outcome.Token), as the client sent it back; empty on a first call.
	Token string
	// Tool and ArgsDigest are the call the confirmation is bound to: the
	// MCP tool name and ArgsDigest of its arguments, the same on the
	// first call and on the one carrying the answer.
	Tool       string
	ArgsDigest string
	// Override is the caller's reason to send although another node uses
	// the plan's identifiers (the bus_conflict gate); audited.
	Override string
}

// Outcome is what Execute did.
type Outcome struct {
	PlanID string
	Status string // StatusNeedsConfirmation or StatusSent
	// Question and Token are set with StatusNeedsConfirmation: ask the
	// question, hand Token to the client as the request state, then call
	// Execute again with the reply and the state. Token answers once,
	// before ConfirmExpires.
	Question       string
	Token          string
	ConfirmExpires time.Time
	// FramesSHA256 is the plan's digest of port and frames, as the
	// transmit audit records it.
	FramesSHA256 string
	Button       *ButtonPress
	// Sent counts the frames the writer confirmed.
	Sent int
	// Uncertain is set with StatusUncertain: the frame the run stopped at.
	Uncertain *Uncertain
	Answers   []Answer
	// Silent lists a scan's requests (frame numbers) that had no answer.
	Silent   []int
	Warnings []string
}

// Outcome statuses.
const (
	StatusNeedsConfirmation = "needs_confirmation"
	StatusSent              = "sent"
	// StatusUncertain: the run stopped at a frame the writer could not
	// confirm, which may have gone out (Outcome.Uncertain).
	StatusUncertain = "uncertain"
)

// Recent is one line of transmit_status history.
type Recent struct {
	Time   time.Time `json:"ts"`
	PlanID string    `json:"plan_id"`
	Port   string    `json:"port"`
	Tool   string    `json:"tool"`
	Event  string    `json:"event"`
	Gate   string    `json:"gate,omitempty"`
	Code   string    `json:"code,omitempty"`
	Sent   int       `json:"frames_sent"`
	// LateReply is an uncertain run's Uncertain.LateReply.
	LateReply string `json:"late_reply,omitempty"`
	owner     Owner
}

type portState struct {
	Port
	busy sync.Mutex // one plan at a time per port
	mu   sync.Mutex
	mode Mode
	sent sends // the box's own sends, told apart from other nodes' frames
}

// Service is the transmit gatekeeper.
type Service struct {
	o       Options
	secret  []byte
	ports   map[string]*portState
	order   []string
	plans   *plans
	confirm *confirmations
	rate    *limiter
	// buttonMu: one plan at a time waits for the confirm button.
	buttonMu sync.Mutex
	mu       sync.Mutex
	recent   []Recent
	waiting  *ButtonWaiting
	previous *PreviousRun
	// auditFailures counts refusal records the auditor could not write.
	auditFailures uint64
}

// New builds a Service. Port names must be unique.
func New(o Options) (*Service, error) {
	if o.Arm == nil {
		o.Arm = neverArmed{}
	}
	if o.Audit == nil {
		o.Audit = noAuditor{}
	}
	if o.Rate.Plans <= 0 || o.Rate.Window <= 0 {
		o.Rate = RateLimit{Plans: DefaultRatePlans, Window: DefaultRateWindow}
	}
	if o.LoadCeiling <= 0 || o.LoadCeiling > 1 {
		o.LoadCeiling = DefaultLoadCeiling
	}
	if o.PlanTTL <= 0 {
		o.PlanTTL = DefaultPlanTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ButtonWait == 0 {
		o.ButtonWait = DefaultButtonWait
	}
	if o.ButtonWait < MinButtonWait || o.ButtonWait > MaxButtonWait {
		return nil, fmt.Errorf("transmit: button wait %v outside %v..%v", o.ButtonWait, MinButtonWait, MaxButtonWait)
	}
	secret := o.Secret
	switch {
	case secret == nil:
		secret = make([]byte, SecretBytes)
		rand.Read(secret)
	case len(secret) != SecretBytes:
		return nil, fmt.Errorf("transmit: confirmation secret is %d bytes, want %d", len(secret), SecretBytes)
	}
	s := &Service{o: o, secret: secret, ports: map[string]*portState{}, plans: newPlans(), confirm: newConfirmations(), rate: newLimiter(o.Rate)}
	for _, p := range o.Ports {
		if s.ports[p.Name] != nil {
			return nil, fmt.Errorf("transmit: port %q listed twice", p.Name)
		}
		s.ports[p.Name] = &portState{Port: p, mode: ModeListenOnly}
		s.order = append(s.order, p.Name)
	}
	return s, nil
}

// ErrNoPort is returned by Plan for a port the service does not know.
var ErrNoPort = errors.New("transmit: no such port")

// Plan checks a spec, stores it and returns the plan. It never touches a
// writer, needs no arming, and works on every board.
func (s *Service) Plan(ctx context.Context, c Caller, sp Spec) (*Plan, error) {
	ps := s.ports[sp.Port]
	if ps == nil {
		return nil, fmt.Errorf("%w %q (have %v)", ErrNoPort, sp.Port, s.order)
	}
	if sp.Medium == "" {
		sp.Medium = ps.Medium
	}
	if sp.Medium != ps.Medium {
		return nil, fmt.Errorf("transmit: port %s is %s, the plan is for %s", sp.Port, ps.Medium, sp.Medium)
	}
	if err := sp.check(); err != nil {
		return nil, fmt.Errorf("transmit: plan: %w", err)
	}
	risk := classify(&sp)
	now := s.o.Now()
	frames := make([]Frame, len(sp.Frames))
	var d time.Duration
	for i, f := range sp.Frames {
		d += f.Delay
		frames[i] = Frame{ID: f.ID, Data: slices.Clone(f.Data), Delay: f.Delay, Offset: d, OnFlowControl: f.OnFlowControl}
	}
	p := &Plan{
		ID: newID(planPrefix), Port: sp.Port, owner: c.Owner(), Medium: sp.Medium, Tool: sp.Tool, Summary: sp.Summary,
		Frames: frames, Count: len(frames), DurationMicro: d.Microseconds(), Risk: risk,
		Preconditions: nonNil(sp.Preconditions), Unknowns: nonNil(sp.Unknowns),
		Hash: hashFrames(sp.Port, frames), Created: now, Expires: now.Add(s.o.PlanTTL),
		expect: sp.Expect, listens: sp.Listens, duration: d, NotSent: nonNil(sp.NotSent),
	}
	bitrate := ps.Bitrate
	if sp.Medium == MediumJ1708 {
		bitrate = j1708Bitrate
	}
	p.AddedLoad, p.LoadBasis = addedLoad(&sp, bitrate, d)
	p.Bus = s.checkBus(ps, sp.Medium, frames, sp.Expect, p.AddedLoad, now)
	if e := sp.Expect; e != nil {
		p.Listen = &listenJSON{Kind: e.Kind, PGN: e.PGN, TimeoutMS: e.Timeout.Milliseconds()}
		if e.Kind == ExpectJ1939 {
			p.Listen.From = fmt.Sprintf("%02X", e.From)
		}
		if e.Kind == ExpectUDS {
			p.Listen.ResponseID = Frame{ID: e.ResponseID}.IDHex()
			p.Listen.FlowControl = fmt.Sprintf("% X", e.FlowControl)
		}
	}
	if s.o.RequireButton {
		p.ButtonCode = ButtonCodeText(ButtonCode(p.ID))
	}
	if err := s.plans.put(p, now); err != nil {
		return nil, err
	}
	s.audit(ctx, Record{Event: EventPlanned}, c, p)
	c2 := *p
	return &c2, nil
}

// Get returns o's stored plan id, or nil when o never made it, it
// expired, or it was evicted: another owner's plan is never returned.
func (s *Service) Get(o Owner, id string) *Plan { return s.plans.get(o, id, s.o.Now()) }

// Plans lists o's live plans, newest first (run and closed ones included,
// marked executed or ended, until they expire).
func (s *Service) Plans(o Owner) []Plan { return s.plans.list(o, s.o.Now()) }

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// audit writes r with the plan's fields filled in.
func (s *Service) audit(ctx context.Context, r Record, c Caller, p *Plan) error {
	r.Time = s.o.Now()
	r.Caller = c
	r.Session = sessionDigest(c.Session)
	if p != nil {
		r.PlanID, r.Port, r.Tool, r.Risk, r.Hash = p.ID, p.Port, p.Tool, p.Risk, p.Hash
	}
	return s.o.Audit.Record(ctx, r)
}

// remember adds one line to the recent history.
func (s *Service) remember(r Recent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recent = append(s.recent, r)
	if len(s.recent) > recentLen {
		s.recent = s.recent[len(s.recent)-recentLen:]
	}
}
