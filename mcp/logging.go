package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"fieldtap/mcp/untrusted"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Bounds of the box's warnings as notifications/message.
const (
	// logQueue bounds what waits for one session: a warning storm (a
	// flapping port) keeps the newest logQueue messages, the older ones
	// are dropped and counted.
	logQueue = 32
	// logBurst and logEvery rate-limit each session: a burst of 10, then
	// one message per logEvery; a storm must not fill a client's
	// transcript or the session's channel.
	logBurst = 10
	logEvery = time.Second
	// maxLogText caps one message's text, a log line rather than a dump.
	maxLogText = 1024
)

// Logger names of notifications/message.
const (
	// loggerBox names a record of no port: the daemon, the MCP server.
	loggerBox = "fieldtapd"
	// loggerPortPrefix + the port names a record about one capture port
	// (its driver's errors, its supervisor's restarts).
	loggerPortPrefix = "driver."
	// loggerSuppressed names the notice of dropped messages.
	loggerSuppressed = "fieldtapd.logging"
)

// BoxLog carries the box's warnings and errors, from every part that
// logs through its Handler (drivers, supervisor, recorder, MCP server),
// to the MCP sessions as notifications/message. A session hears a
// record when its logging/setLevel level lets it through (mcp-go's
// default is error, so a session that never set one hears errors
// only). Each session has a queue of logQueue messages (the oldest
// dropped and counted when full) drained by its own goroutine at a
// burst of logBurst, then one per logEvery; the next message after a
// drop is preceded by a notice of how many were suppressed. Logging a
// record takes one short lock and never waits for a client, so the
// capture path that logged it is not slowed by a slow session.
//
// A BoxLog serves one MCP server (Options.Logs).
type BoxLog struct {
	mu       sync.Mutex
	send     func(session string, n mcpgo.LoggingMessageNotification) error
	sessions map[string]*logSession
}

// NewBoxLog returns a BoxLog with no session yet: records are written
// to the operator's log only until a client connects.
func NewBoxLog() *BoxLog {
	return &BoxLog{sessions: map[string]*logSession{}}
}

// Handler tees next: every record goes to next as before, and warnings
// and errors also go to the sessions.
func (b *BoxLog) Handler(next slog.Handler) slog.Handler {
	return logTee{next: next, b: b}
}

type logEntry struct {
	level        mcpgo.LoggingLevel
	logger, text string
}

type logSession struct {
	level   func() mcpgo.LoggingLevel // the session's level; nil: it cannot log
	queue   []logEntry                // oldest first, at most logQueue
	dropped uint64                    // dropped from the queue since the last notice
	wake    chan struct{}             // one pending wake-up for the sender
	stop    chan struct{}             // closed when the session goes
	tokens  float64                   // the rate limit's bucket, refilled by take
	at      time.Time                 // when tokens was last refilled
	sending bool                      // the sender holds a message it took from the queue
}

func newLogSession(level func() mcpgo.LoggingLevel) *logSession {
	return &logSession{level: level, wake: make(chan struct{}, 1), stop: make(chan struct{}), tokens: logBurst, at: time.Now()}
}

// take spends one token of the rate limit if there is one.
func (ls *logSession) take(now time.Time) bool {
	ls.tokens = min(logBurst, ls.tokens+now.Sub(ls.at).Seconds()/logEvery.Seconds())
	ls.at = now
	if ls.tokens < 1 {
		return false
	}
	ls.tokens--
	return true
}

// push queues e, dropping (and counting) the oldest when full.
func (ls *logSession) push(e logEntry) {
	if len(ls.queue) == logQueue {
		ls.queue = append(ls.queue[:0], ls.queue[1:]...)
		ls.dropped++
	}
	ls.queue = append(ls.queue, e)
}

// hook follows sessions as mcp-go registers and forgets them; send
// delivers to one session.
func (b *BoxLog) hook(h *server.Hooks, send func(string, mcpgo.LoggingMessageNotification) error) {
	b.mu.Lock()
	b.send = send
	b.mu.Unlock()
	h.AddOnRegisterSession(func(_ context.Context, s server.ClientSession) {
		var level func() mcpgo.LoggingLevel
		if l, ok := s.(server.SessionWithLogging); ok {
			level = l.GetLogLevel
		}
		ls := newLogSession(level)
		b.mu.Lock()
		if old := b.sessions[s.SessionID()]; old != nil {
			close(old.stop)
		}
		b.sessions[s.SessionID()] = ls
		b.mu.Unlock()
		go b.drain(s.SessionID(), ls)
	})
	h.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if ls := b.sessions[s.SessionID()]; ls != nil {
			close(ls.stop)
			delete(b.sessions, s.SessionID())
		}
	})
}

// publish hands one record to every session whose level lets it
// through: sent at once while the session's queue is empty and its rate
// allows (in the call that logged it, so over HTTP it rides that call's
// stream), queued for its sender otherwise.
func (b *BoxLog) publish(e logEntry) {
	// A warning can quote what a file or a sender wrote (a malformed
	// line's parse error): no control or bidi character and no fence
	// bracket reaches the client, and the cut falls on a rune boundary.
	if clean, cut := untrusted.Sanitize(e.text, false, maxLogText); cut {
		e.text = clean + "…[truncated]"
	} else {
		e.text = clean
	}
	var now []string
	b.mu.Lock()
	for id, ls := range b.sessions {
		if ls.level == nil || !e.level.ShouldSendTo(ls.level()) {
			continue
		}
		if len(ls.queue) == 0 && ls.dropped == 0 && !ls.sending && ls.take(time.Now()) {
			now = append(now, id)
			continue
		}
		ls.push(e)
		select {
		case ls.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	send := b.send
	b.mu.Unlock()
	// mcp-go's send does not block: a session that cannot take it (not
	// initialized, channel full) loses it, as a notification is lost.
	for _, id := range now {
		_ = send(id, mcpgo.NewLoggingMessageNotification(e.level, e.logger, e.text))
	}
}

// drain is one session's sender: it sends the queue in order as the
// session's tokens allow, until the session goes.
func (b *BoxLog) drain(id string, ls *logSession) {
	for {
		select {
		case <-ls.stop:
			return
		case <-ls.wake:
		}
		for {
			b.mu.Lock()
			if len(ls.queue) == 0 {
				b.mu.Unlock()
				break
			}
			if !ls.take(time.Now()) {
				wait := time.Duration((1 - ls.tokens) * float64(logEvery))
				b.mu.Unlock()
				select {
				case <-ls.stop:
					return
				case <-time.After(wait):
				}
				continue
			}
			e, dropped, send := ls.queue[0], ls.dropped, b.send
			ls.queue = ls.queue[1:]
			ls.dropped = 0
			ls.sending = true
			b.mu.Unlock()
			if dropped > 0 {
				_ = send(id, mcpgo.NewLoggingMessageNotification(mcpgo.LoggingLevelWarning, loggerSuppressed,
					fmt.Sprintf("suppressed %d messages: more than %d were waiting for this session (it gets %d at once, then one every %s)", dropped, logQueue, logBurst, logEvery)))
			}
			_ = send(id, mcpgo.NewLoggingMessageNotification(e.level, e.logger, e.text))
			b.mu.Lock()
			ls.sending = false
			b.mu.Unlock()
		}
	}
}

// logTee is the slog handler of BoxLog.Handler.
type logTee struct {
	next  slog.Handler
	b     *BoxLog
	attrs []slog.Attr
	group string
}

func (t logTee) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || t.next.Enabled(ctx, l)
}

func (t logTee) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		var b strings.Builder
		b.WriteString(r.Message)
		logger := loggerBox
		add := func(a slog.Attr) bool {
			k := a.Key
			if t.group != "" {
				k = t.group + "." + k
			}
			if k == "port" && a.Value.Kind() == slog.KindString {
				logger = loggerPortPrefix + a.Value.String()
			}
			fmt.Fprintf(&b, " %s=%v", k, a.Value)
			return true
		}
		for _, a := range t.attrs {
			add(a)
		}
		r.Attrs(add)
		level := mcpgo.LoggingLevelWarning
		if r.Level >= slog.LevelError {
			level = mcpgo.LoggingLevelError
		}
		t.b.publish(logEntry{level: level, logger: logger, text: b.String()})
	}
	if t.next.Enabled(ctx, r.Level) {
		return t.next.Handle(ctx, r)
	}
	return nil
}

func (t logTee) WithAttrs(as []slog.Attr) slog.Handler {
	t.next = t.next.WithAttrs(as)
	t.attrs = append(t.attrs[:len(t.attrs):len(t.attrs)], as...)
	return t
}

func (t logTee) WithGroup(name string) slog.Handler {
	t.next = t.next.WithGroup(name)
	if t.group != "" {
		name = t.group + "." + name
	}
	t.group = name
	return t
}
