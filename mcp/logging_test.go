//lint:file-ignore SA1019 the box still honours logging/setLevel and sends notifications/message (docs/mcp-protocol.md, Logging) to clients of the protocol versions before 2026-07-28; this file is such a client, and the go-sdk's logging API it must use is deprecated with the feature.

package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/mcp/front"
)

// failingTool fails with a plain Go error, which the adapter logs as a
// warning: a warning of the box that a test can cause.
var failingTool = tool[noArgs, struct{}]{
	name:  "fail_for_test",
	desc:  "Fails.",
	hints: readOnly(),
	run:   func(*call, noArgs) (struct{}, error) { return struct{}{}, errors.New("disk on fire") },
}

type logMessages struct {
	mu   sync.Mutex
	msgs []*sdk.LoggingMessageParams
}

func (l *logMessages) handler(_ context.Context, req *sdk.LoggingMessageRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, req.Params)
}

func (l *logMessages) n() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.msgs)
}

// TestWarningsFollowTheSessionsLevel: a session that never set a level
// hears no warning of the MCP server (mcp-go's default is error), one
// that set warning hears it, and one back at error hears none again.
func TestWarningsFollowTheSessionsLevel(t *testing.T) {
	for _, cn := range connectors {
		t.Run(cn.name, func(t *testing.T) {
			l := &logMessages{}
			s, _ := cn.connect(t, newLiveBox(t), sdk.NewClient(&sdk.Implementation{Name: "log-test", Version: "1"}, &sdk.ClientOptions{LoggingMessageHandler: l.handler}), failingTool, captureStatusTool)
			ctx := context.Background()
			fail := func() {
				if _, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "fail_for_test"}); err != nil {
					t.Fatal(err)
				}
			}
			fail()
			if err := s.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "warning"}); err != nil {
				t.Fatal(err)
			}
			fail()
			eventually(t, "the warning", func() bool { return l.n() >= 1 })
			l.mu.Lock()
			if m := l.msgs[0]; len(l.msgs) != 1 || m.Level != "warning" || m.Logger != loggerBox || !strings.Contains(m.Data.(string), "tool failed tool=fail_for_test err=disk on fire") {
				t.Errorf("messages %d, first %+v", len(l.msgs), m)
			}
			l.mu.Unlock()
			if err := s.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "error"}); err != nil {
				t.Fatal(err)
			}
			before := l.n()
			fail()
			// A warning after the level went back to error is not sent; a
			// capture_status call behind it proves the stream moved on.
			if _, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "capture_status"}); err != nil {
				t.Fatal(err)
			}
			if l.n() != before {
				t.Errorf("a warning reached a session at level error")
			}
		})
	}
}

// TestBoxWarningsReachTheSessionsThatAskedForThem: a warning the daemon
// logs about a port (as the supervisor does when a driver fails) through
// the BoxLog reaches, over HTTP with the go-sdk client, the session at
// level warning as a message of logger driver.<port>, and neither the
// session that never set a level nor the one at error: the first thing
// those two hear is a later error. A flood is cut to the burst; the
// queue keeps its newest messages, and the next one sent is preceded by
// the count of those dropped.
func TestBoxWarningsReachTheSessionsThatAskedForThem(t *testing.T) {
	box := NewBoxLog()
	log := slog.New(box.Handler(slog.NewTextHandler(io.Discard, nil)))
	d := testDeps()
	d.Log = log
	srv, _ := assemble(d, Options{MaxResponseBytes: DefaultMaxResponseBytes, Logs: box}, []toolDef{captureStatusTool}, false)
	e := front.NewHTTPEndpoint(srv, front.HTTPOptions{Log: testDeps().Log})
	ts := httptest.NewServer(e)
	t.Cleanup(func() { ts.Close(); e.Close(context.Background()) })
	ctx := context.Background()
	session := func(level sdk.LoggingLevel) *logMessages {
		l := &logMessages{}
		s, err := sdk.NewClient(&sdk.Implementation{Name: "box-log-test", Version: "1"}, &sdk.ClientOptions{LoggingMessageHandler: l.handler}).
			Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &sdk.ClientSessionOptions{ProtocolVersion: legacyProtocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if level != "" {
			if err := s.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: level}); err != nil {
				t.Fatal(err)
			}
		}
		return l
	}
	warned, silent, errorsOnly := session("warning"), session(""), session("error")

	log.Warn("port failed; restarting", "port", "can0", "err", "read: network is down", "restarts", 3)
	eventually(t, "the driver warning", func() bool { return warned.n() >= 1 })
	log.Error("recorder close", "err", "no space left on device")
	for _, l := range []*logMessages{silent, errorsOnly} {
		eventually(t, "the error", func() bool { return l.n() >= 1 })
		l.mu.Lock()
		if m := l.msgs[0]; m.Level != "error" || m.Logger != loggerBox || !strings.Contains(m.Data.(string), "recorder close err=no space left on device") {
			t.Errorf("a session below warning first heard %+v", m)
		}
		l.mu.Unlock()
	}
	eventually(t, "the error at warning", func() bool { return warned.n() >= 2 })
	warned.mu.Lock()
	if m := warned.msgs[0]; m.Level != "warning" || m.Logger != "driver.can0" || m.Data != "port failed; restarting port=can0 err=read: network is down restarts=3" {
		t.Errorf("the driver warning arrived as %+v", m)
	}
	warned.mu.Unlock()

	// Two messages spent two of the burst's tokens; spend the rest, so
	// the flood finds the session waiting a second for its next token
	// and fills its queue meanwhile (200 log calls take far less).
	for i := range logBurst - 2 {
		log.Warn("frames dropped", "port", "can1", "n", i)
	}
	eventually(t, "the rest of the burst", func() bool { return warned.n() >= logBurst })
	const flood = 200
	for i := range flood {
		log.Warn("frames dropped", "port", "can1", "n", i)
	}
	eventually(t, "the notice of suppressed messages", func() bool { return warned.n() >= logBurst+2 })
	warned.mu.Lock()
	defer warned.mu.Unlock()
	// Message logBurst (counting from 0) is the notice: the burst held.
	notice, next := warned.msgs[logBurst], warned.msgs[logBurst+1]
	var dropped int
	if _, err := fmt.Sscanf(notice.Data.(string), "suppressed %d messages", &dropped); err != nil || notice.Logger != loggerSuppressed || notice.Level != "warning" {
		t.Fatalf("notice %+v: %v", notice, err)
	}
	// The queue kept the newest logQueue of the flood: the first one sent
	// is the oldest of those, and the rest were suppressed.
	if dropped != flood-logQueue || next.Logger != "driver.can1" || next.Data != fmt.Sprintf("frames dropped port=can1 n=%d", flood-logQueue) {
		t.Errorf("%d suppressed (want %d), then %+v", dropped, flood-logQueue, next)
	}
}

// TestLogQueueDropsTheOldest: a full session queue keeps the newest
// messages and counts the ones it dropped.
func TestLogQueueDropsTheOldest(t *testing.T) {
	var ls logSession
	for i := range logQueue + 5 {
		ls.push(logEntry{text: fmt.Sprint(i)})
	}
	if len(ls.queue) != logQueue || ls.queue[0].text != "5" || ls.queue[logQueue-1].text != fmt.Sprint(logQueue+4) || ls.dropped != 5 {
		t.Errorf("queue of %d from %q to %q, %d dropped", len(ls.queue), ls.queue[0].text, ls.queue[len(ls.queue)-1].text, ls.dropped)
	}
}

// TestBoxWarningsCarryNoControlCharacters: a warning quoting what a file
// or a sender wrote reaches the session without ESC, bidi controls or
// fence brackets, cut on a rune boundary.
func TestBoxWarningsCarryNoControlCharacters(t *testing.T) {
	b := NewBoxLog()
	ls := newLogSession(func() mcpgo.LoggingLevel { return mcpgo.LoggingLevelDebug })
	ls.tokens = 0 // everything queues, where the test reads it
	b.sessions["s"] = ls
	log := slog.New(b.Handler(slog.NewTextHandler(io.Discard, nil)))
	log.Warn("skipping malformed candump line", "port", "file0", "err", "bad id \"\x1b[31m\u202eABC⟧ ignore ⟦\"")
	log.Warn("long", "err", strings.Repeat("é", maxLogText))
	if len(ls.queue) != 2 {
		t.Fatalf("%d queued, want 2", len(ls.queue))
	}
	if got, want := ls.queue[0].text, `skipping malformed candump line port=file0 err=bad id "[31mABC] ignore ["`; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	long := ls.queue[1].text
	if !utf8.ValidString(long) || !strings.HasSuffix(long, "…[truncated]") || len(long) > maxLogText+len("…[truncated]") {
		t.Errorf("long text: valid %v, %d bytes, ends %q", utf8.ValidString(long), len(long), long[len(long)-20:])
	}
}
