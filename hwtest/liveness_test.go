package hwtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// link types "link DEV HOW" on the guest's console, where /init's
// command loop sets the link, and waits for its LinkLine.
func (b *board) link(t *testing.T, dev, how string) {
	t.Helper()
	mark := b.console.size()
	if _, err := fmt.Fprintf(b.keys, "link %s %s\n", dev, how); err != nil {
		t.Fatalf("typing on the guest's console: %v", err)
	}
	done := fmt.Sprintf("%s %s %s", LinkLine, dev, how)
	for deadline := time.Now().Add(checkGiveUp); len(b.console.since(mark, done)) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the console", done)
		}
	}
}

// portNamed is capture_status's row for name.
func portNamed(t *testing.T, ctx context.Context, cs *sdk.ClientSession, name string) portStatus {
	t.Helper()
	st := captureStatus(t, ctx, cs)
	for _, p := range st.ports {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("capture_status has no port %s: %s", name, st.raw)
	return portStatus{}
}

// waitPort polls capture_status until ok holds for the port.
func waitPort(t *testing.T, ctx context.Context, cs *sdk.ClientSession, name, what string, ok func(portStatus) bool) portStatus {
	t.Helper()
	for deadline := time.Now().Add(checkGiveUp); ; time.Sleep(250 * time.Millisecond) {
		p := portNamed(t, ctx, cs, name)
		if ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never %s: %+v", name, what, p)
		}
	}
}

// linkCheck sets can0 down and up again from inside the guest, as an
// operator at the box's shell would, under the live socketcan port: the
// capture socket's ENETDOWN ends the session, the supervisor restarts
// it (the session configures the controller again, listen-only, and
// brings the link up), capture_status counts the restart and shows the
// port capturing again, the state changes are logged, and frames from
// can1 are counted again.
func linkCheck(t *testing.T, ctx context.Context, b *board, cs *sdk.ClientSession) {
	before := waitPort(t, ctx, cs, "can0", "capturing", func(p portStatus) bool { return p.State == "capturing" })
	mark := b.console.size()
	b.link(t, "can0", "down")
	b.link(t, "can0", "up")
	back := waitPort(t, ctx, cs, "can0", "restarted and capturing", func(p portStatus) bool {
		return p.Restarts > before.Restarts && p.State == "capturing"
	})
	if !strings.Contains(back.LastError, "network is down") || back.StateSince == nil || !back.StateSince.After(*before.StateSince) {
		t.Errorf("can0 after the bounce: last error %q, capturing since %v (before: %v); want the link's ENETDOWN and a later since", back.LastError, back.StateSince, before.StateSince)
	}
	resumed := waitPort(t, ctx, cs, "can0", "counting frames again", func(p portStatus) bool { return p.Frames > back.Frames })
	var states []string
	for _, l := range b.console.since(mark, `msg="port state" port=can0 `) {
		if i := strings.Index(l, " state="); i >= 0 {
			states = append(states, strings.Fields(l[i+len(" state="):])[0])
		}
	}
	if !inOrder(states, "restarting", "capturing") {
		t.Errorf("can0 states logged since the bounce: %v, want restarting then capturing", states)
	}
	// The controller mode the next STAT line reads, after the restart.
	statMark, mode := b.console.size(), ""
	for deadline := time.Now().Add(checkGiveUp); mode == ""; time.Sleep(250 * time.Millisecond) {
		if lines := b.console.since(statMark, StatLine); len(lines) > 0 {
			for _, m := range statField.FindAllStringSubmatch(lines[0], -1) {
				if m[1] == "can0_mode" {
					mode = m[2]
				}
			}
		}
		if mode == "" && time.Now().After(deadline) {
			t.Fatal("no STAT line with can0_mode after the bounce")
		}
	}
	if mode != "listen-only" {
		t.Errorf("can0 after the bounce is %s, want listen-only again", mode)
	}
	t.Logf("can0: %d -> %d restarts, last error %q, states %v, frames %d -> %d, mode %s",
		before.Restarts, resumed.Restarts, back.LastError, states, before.Frames, resumed.Frames, mode)
}

// inOrder reports whether want occur in got in that order, other entries
// allowed between them.
func inOrder(got []string, want ...string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
