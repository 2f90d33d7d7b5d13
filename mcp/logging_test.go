package mcp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
// hears no warning (mcp-go's default is error), one that set warning
// hears each, a storm is cut to the burst with the drops counted in the
// next message, and a session back at error hears none again.
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
			if m := l.msgs[0]; len(l.msgs) != 1 || m.Level != "warning" || m.Logger != "fieldtapd" || !strings.Contains(m.Data.(string), "tool failed tool=fail_for_test err=disk on fire") {
				t.Errorf("messages %d, first %+v", len(l.msgs), m)
			}
			l.mu.Unlock()
			for range 3 * logBurst {
				fail()
			}
			// One token went to the first warning; the storm gets the rest
			// of the burst, give or take the refill while it runs.
			eventually(t, "the storm's burst", func() bool { return l.n() >= logBurst })
			if n := l.n(); n > logBurst+2 {
				t.Errorf("%d messages from a storm of %d: the rate limit did not hold", n, 3*logBurst)
			}
			// Once a token is back, the next warning counts the dropped ones.
			eventually(t, "the count of dropped warnings", func() bool {
				fail()
				l.mu.Lock()
				defer l.mu.Unlock()
				return strings.Contains(l.msgs[len(l.msgs)-1].Data.(string), "earlier messages not sent: more than 10 at once")
			})
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
