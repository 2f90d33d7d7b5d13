package front

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"fieldtap/mcp"
)

// TestStdioCallsTakeOnlyToolCallsWithinTheirSlots: a tools/call is taken
// once Listen handed over the session's context and a slot is free; any
// other message, and a call while every slot is busy, stays with
// mcp-go's loop.
func TestStdioCallsTakeOnlyToolCallsWithinTheirSlots(t *testing.T) {
	var out bytes.Buffer
	d := &drain{w: &out}
	d.answered = sync.NewCond(&d.mu)
	c := newStdioCalls(testServer(t, mcp.Options{Bundles: []string{"server"}}), d, testLog())
	call := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"capture_status","arguments":{}}}` + "\n")
	if c.take(call) {
		t.Fatal("taken before Listen handed over the session's context")
	}
	c.session(context.Background())
	if c.take([]byte(`{"jsonrpc":"2.0","id":8,"method":"ping"}` + "\n")) {
		t.Error("a ping was taken")
	}
	for range stdioCallSlots {
		c.slots <- struct{}{}
	}
	if c.take(call) {
		t.Error("taken with every slot busy")
	}
	for range stdioCallSlots {
		<-c.slots
	}
	if !c.take(call) {
		t.Fatal("a tools/call with a free slot was not taken")
	}
	c.close()
	if got := out.String(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":7,"result":{`) || !strings.HasSuffix(got, "}\n") || d.answers != 1 {
		t.Errorf("answer %.200q, %d answers counted", got, d.answers)
	}
}

// TestStdioCallsReuseTheirWorkers: calls run on at most stdioCallSlots
// long-lived workers, however many come, one after another or together.
func TestStdioCallsReuseTheirWorkers(t *testing.T) {
	d := &drain{w: io.Discard}
	d.answered = sync.NewCond(&d.mu)
	c := newStdioCalls(testServer(t, mcp.Options{Bundles: []string{"server"}}), d, testLog())
	c.session(context.Background())
	call := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"capture_status","arguments":{}}}` + "\n")
	const n = 40
	for i := 1; i <= n; i++ {
		for !c.take(call) { // false while every slot is busy
			runtime.Gosched()
		}
		if i <= n/2 { // the first half one after another
			d.mu.Lock()
			for d.answers < i {
				d.answered.Wait()
			}
			d.mu.Unlock()
		}
	}
	c.close()
	if c.started < 1 || c.started > stdioCallSlots || d.answers != n {
		t.Errorf("%d workers started, %d answers of %d", c.started, d.answers, n)
	}
}
