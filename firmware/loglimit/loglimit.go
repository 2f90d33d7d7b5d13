package loglimit

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Defaults of Options.
const (
	// DefaultBurst is how many records of one kind pass per window: enough
	// to show what went wrong and where, few enough that a flood of bad
	// input writes a handful of lines.
	DefaultBurst = 10
	// DefaultWindow is the period a burst is counted over; a kind still
	// flooding is summarised once per window.
	DefaultWindow = 10 * time.Second
	// DefaultMaxKinds bounds the kinds tracked at once; past it every new
	// kind shares one allowance (a flood of distinct peers stays bounded).
	DefaultMaxKinds = 1024
)

// SuppressedMsg is the message of the record that reports suppressed
// lines; its attributes name the kind ("kind", the message, and its
// source attribute) and "suppressed", the count.
const SuppressedMsg = "log lines suppressed"

// sourceKeys are the attributes whose value tells one kind from another
// of the same message: a bad line in one file is not a bad line in
// another.
var sourceKeys = []string{"port", "file", "source", "peer"}

// Options bound the records let through. Zero fields take the defaults.
type Options struct {
	Burst    int
	Window   time.Duration
	MaxKinds int
	// MinLevel is the lowest level limited; records below it pass.
	// Its zero value is slog.LevelInfo.
	MinLevel slog.Level
}

func (o *Options) check() error {
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	if o.MaxKinds == 0 {
		o.MaxKinds = DefaultMaxKinds
	}
	if o.Burst < 1 || o.Window < 0 || o.MaxKinds < 1 {
		return fmt.Errorf("loglimit: burst %d, window %v, kinds %d: want all positive", o.Burst, o.Window, o.MaxKinds)
	}
	return nil
}

// Handler limits the records it hands to the next handler.
type Handler struct {
	next   slog.Handler
	st     *state
	source slog.Attr // a source attribute given by WithAttrs; zero if none
}

// state is shared by a Handler and every handler derived from it.
type state struct {
	o   Options
	now func() time.Time
	mu  sync.Mutex
	// out is the handler summaries go to: the root's next, without the
	// attributes of whichever logger happened to close the window.
	out   slog.Handler
	kinds map[kindKey]*kind
}

type kindKey struct {
	level  slog.Level
	msg    string
	source string
}

// kind is one kind's current window.
type kind struct {
	key        kindKey
	sourceAttr slog.Attr
	start      time.Time
	passed     int
	suppressed uint64
	timer      *time.Timer // reports the suppressed count when the window ends
}

var _ slog.Handler = (*Handler)(nil)

// New wraps next; o is checked once.
func New(next slog.Handler, o Options) (*Handler, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return &Handler{next: next, st: &state{o: o, now: time.Now, out: next, kinds: map[kindKey]*kind{}}}, nil
}

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := &Handler{next: h.next.WithAttrs(as), st: h.st, source: h.source}
	for _, a := range as {
		if slices.Contains(sourceKeys, a.Key) && out.source.Key == "" {
			out.source = a
		}
	}
	return out
}

func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), st: h.st, source: h.source}
}

// Handle passes r on unless its kind has used its burst in this window.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < h.st.o.MinLevel {
		return h.next.Handle(ctx, r)
	}
	src := h.source
	if src.Key == "" {
		r.Attrs(func(a slog.Attr) bool {
			if slices.Contains(sourceKeys, a.Key) {
				src = a
				return false
			}
			return true
		})
	}
	if !h.st.admit(kindKey{level: r.Level, msg: r.Message, source: src.Value.String()}, src) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// admit counts one record of k and reports whether it passes.
func (s *state) admit(k kindKey, src slog.Attr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	kd := s.kinds[k]
	if kd == nil && len(s.kinds) >= s.o.MaxKinds {
		s.forgetEndedLocked(now)
	}
	if kd == nil {
		if len(s.kinds) >= s.o.MaxKinds {
			k, src = kindKey{level: k.level, msg: "(other log lines)"}, slog.Attr{}
			kd = s.kinds[k]
		}
		if kd == nil {
			kd = &kind{key: k, sourceAttr: src, start: now}
			s.kinds[k] = kd
		}
	}
	if now.Sub(kd.start) >= s.o.Window {
		s.reportLocked(kd)
		kd.start, kd.passed = now, 0
	}
	if kd.passed < s.o.Burst {
		kd.passed++
		return true
	}
	if kd.suppressed == 0 {
		kd.timer = time.AfterFunc(s.o.Window-now.Sub(kd.start), func() { s.windowEnded(kd) })
	}
	kd.suppressed++
	return false
}

// forgetEndedLocked drops the kinds whose window has ended, reporting
// what they suppressed: forgetting them changes no decision.
func (s *state) forgetEndedLocked(now time.Time) {
	for k, kd := range s.kinds {
		if now.Sub(kd.start) >= s.o.Window {
			s.reportLocked(kd)
			delete(s.kinds, k)
		}
	}
}

// windowEnded reports kd's count when its window ends without another
// record of its kind, and forgets it.
func (s *state) windowEnded(kd *kind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kinds[kd.key] != kd {
		return
	}
	s.reportLocked(kd)
	delete(s.kinds, kd.key)
}

// reportLocked writes kd's suppressed count, if any, and zeroes it.
func (s *state) reportLocked(kd *kind) {
	if kd.timer != nil {
		kd.timer.Stop()
		kd.timer = nil
	}
	if kd.suppressed == 0 {
		return
	}
	r := slog.NewRecord(s.now(), max(kd.key.level, slog.LevelWarn), SuppressedMsg, 0)
	r.AddAttrs(slog.String("kind", kd.key.msg))
	if kd.sourceAttr.Key != "" {
		r.AddAttrs(kd.sourceAttr)
	}
	r.AddAttrs(slog.Uint64("suppressed", kd.suppressed), slog.Duration("window", s.o.Window))
	kd.suppressed = 0
	_ = s.out.Handle(context.Background(), r) // stderr has nowhere to report its own failure
}

// Flush reports every count still pending; call it before exit.
func (h *Handler) Flush() {
	s := h.st
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, kd := range s.kinds {
		s.reportLocked(kd)
		delete(s.kinds, k)
	}
}
