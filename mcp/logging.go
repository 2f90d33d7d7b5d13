package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Bounds of the box's warnings as notifications/message.
const (
	// logBurst and logEvery rate-limit each session: a burst of 10, then
	// one message per logEvery; a warning storm (a flapping port) must
	// not fill a client's transcript or the session's channel.
	logBurst = 10
	logEvery = time.Second
	// maxLogText caps one message's text, a log line rather than a dump.
	maxLogText = 1024
)

// logFanout sends the box's warnings and errors (the server's logger at
// slog.LevelWarn and above) to every session as notifications/message.
// A message below the level the session set with logging/setLevel is
// not sent (mcp-go's default level is error, so a session that never set
// one hears errors only). Each session has its own token bucket; the
// messages it drops are counted and the next message it gets says how
// many.
type logFanout struct {
	send func(session string, n mcpgo.LoggingMessageNotification) error
	now  func() time.Time

	mu       sync.Mutex
	sessions map[string]*logBucket
}

type logBucket struct {
	level   func() mcpgo.LoggingLevel // the session's level; nil: mcp-go's default
	tokens  float64
	at      time.Time
	dropped uint64 // since the last message sent
}

func newLogFanout(send func(string, mcpgo.LoggingMessageNotification) error) *logFanout {
	return &logFanout{send: send, now: time.Now, sessions: map[string]*logBucket{}}
}

// hook follows sessions as mcp-go registers and forgets them.
func (f *logFanout) hook(h *server.Hooks) {
	h.AddOnRegisterSession(func(_ context.Context, s server.ClientSession) {
		f.mu.Lock()
		defer f.mu.Unlock()
		b := &logBucket{tokens: logBurst, at: f.now()}
		if l, ok := s.(server.SessionWithLogging); ok {
			b.level = l.GetLogLevel
		}
		f.sessions[s.SessionID()] = b
	})
	h.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.sessions, s.SessionID())
	})
}

// publish offers one record to every session its bucket allows.
func (f *logFanout) publish(level mcpgo.LoggingLevel, text string) {
	if len(text) > maxLogText {
		text = text[:maxLogText] + "…[truncated]"
	}
	now := f.now()
	type out struct {
		session string
		n       mcpgo.LoggingMessageNotification
	}
	var send []out
	f.mu.Lock()
	for id, b := range f.sessions {
		// Below the session's level nothing is sent, and no token spent.
		if b.level == nil || !level.ShouldSendTo(b.level()) {
			continue
		}
		b.tokens = min(logBurst, b.tokens+now.Sub(b.at).Seconds()/logEvery.Seconds())
		b.at = now
		if b.tokens < 1 {
			b.dropped++
			continue
		}
		b.tokens--
		msg := text
		if b.dropped > 0 {
			msg = fmt.Sprintf("%s (%d earlier messages not sent: more than %d at once)", text, b.dropped, logBurst)
			b.dropped = 0
		}
		send = append(send, out{id, mcpgo.NewLoggingMessageNotification(level, "fieldtapd", msg)})
	}
	f.mu.Unlock()
	for _, s := range send {
		// A session that cannot take it (not initialized, channel full)
		// misses it: a warning never blocks the code that logged it.
		_ = f.send(s.session, s.n)
	}
}

// logTee is the server's slog handler: every record goes to the
// operator's handler as before, and warnings and errors also go to the
// sessions.
type logTee struct {
	next  slog.Handler
	f     *logFanout
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
		add := func(a slog.Attr) bool {
			k := a.Key
			if t.group != "" {
				k = t.group + "." + k
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
		t.f.publish(level, b.String())
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
