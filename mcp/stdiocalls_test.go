package mcp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// TestStdioCallsTakeOnlyToolCallsWithinTheirSlots: a tools/call is taken
// once Listen handed over the session's context and a slot is free; any
// other message, and a call while every slot is busy, stays with
// mcp-go's loop.
func TestStdioCallsTakeOnlyToolCallsWithinTheirSlots(t *testing.T) {
	var out bytes.Buffer
	d := &drain{w: &out}
	d.answered = sync.NewCond(&d.mu)
	c := newStdioCalls(testServer(t, testDeps(), serverTools...), d, slog.New(slog.NewTextHandler(io.Discard, nil)))
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
