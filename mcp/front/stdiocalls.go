package front

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp/answerjson"
)

// stdioCallSlots bounds the tools/call served at once on stdio, as
// mcp-go's worker pool (5) did; a call past it goes to that pool.
const stdioCallSlots = 5

// stdioCalls serves tools/call on stdio through MCPServer.HandleMessage
// and writes each answer with answerjson.Append: mcp-go's stdio writer
// encodes with encoding/json, whose second pass over a large answer cost
// more than the tool (docs/benchmarks.md). Every other message, and any
// call while the slots are busy, stays with mcp-go's StdioServer.
// Cancellation (notifications/cancelled), progress, logging and
// elicitation work as before: the call runs in mcp-go's session context.
//
// The calls run on long-lived workers, one started per slot the first
// time it is needed: a goroutine per call grew its stack from the
// smallest size on every call (a tenth of capture_status's CPU in the
// daemon went to copying stacks).
type stdioCalls struct {
	s       *server.MCPServer
	d       *drain
	log     *slog.Logger
	base    atomic.Pointer[context.Context] // the session's, once Listen set it up
	stop    context.CancelFunc
	slots   chan struct{}
	work    chan stdioCall // to an idle worker
	calls   sync.WaitGroup // calls taken and not yet answered
	workers sync.WaitGroup
	started int // workers started; only take reads and writes it
}

// stdioCall is one request take took.
type stdioCall struct {
	ctx      context.Context
	line, id json.RawMessage
}

func newStdioCalls(s *server.MCPServer, d *drain, log *slog.Logger) *stdioCalls {
	return &stdioCalls{s: s, d: d, log: log, slots: make(chan struct{}, stdioCallSlots), work: make(chan stdioCall)}
}

// session is mcp-go's context func: it sees the context Listen built,
// which carries the stdio session.
func (c *stdioCalls) session(ctx context.Context) context.Context {
	cctx, stop := context.WithCancel(ctx)
	c.stop = stop
	c.base.Store(&cctx)
	return ctx
}

// close cancels the calls still running and waits for them: after
// Listen returned, as mcp-go does with its own.
func (c *stdioCalls) close() {
	if c.stop != nil {
		c.stop()
	}
	c.calls.Wait()
	close(c.work) // take is not called again: the input has ended
	c.workers.Wait()
}

// take starts serving line if it is a tools/call request and a slot is
// free.
func (c *stdioCalls) take(line []byte) bool {
	if !bytes.Contains(line, []byte(`"tools/call"`)) {
		return false
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &head) != nil || head.Method != string(mcpgo.MethodToolsCall) || len(head.ID) == 0 || string(head.ID) == "null" {
		return false
	}
	ctx := c.base.Load()
	if ctx == nil {
		return false
	}
	select {
	case c.slots <- struct{}{}:
	default:
		return false
	}
	c.calls.Add(1)
	call := stdioCall{ctx: *ctx, line: line, id: head.ID}
	select {
	case c.work <- call:
	default:
		if c.started < stdioCallSlots {
			c.started++
			c.workers.Add(1)
			go c.worker(call)
			break
		}
		// Every worker started and none idle yet: with this slot held
		// at most stdioCallSlots-1 calls run, so one is on its way back.
		c.work <- call
	}
	return true
}

// worker answers call, then each call handed to it, until close.
func (c *stdioCalls) worker(call stdioCall) {
	defer c.workers.Done()
	for ok := true; ok; call, ok = <-c.work {
		c.answer(call)
	}
}

func (c *stdioCalls) answer(call stdioCall) {
	defer c.calls.Done()
	defer func() { <-c.slots }()
	buf := answerjson.Buffer()
	*buf = c.serve((*buf)[:0], call.ctx, call.line, call.id)
	if err := c.d.answer(*buf); err != nil {
		c.log.Warn("mcp stdio: writing an answer", "err", err)
	}
	answerjson.Recycle(buf)
}

// serve appends one call's answer line to dst, a panic included (an
// INTERNAL_ERROR carrying the request's id, as mcp-go's stdio answers
// one).
func (c *stdioCalls) serve(dst []byte, ctx context.Context, line, id json.RawMessage) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ := json.Marshal(fmt.Sprintf("internal panic: %v", r))
			out = fmt.Appendf(dst[:0], `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, mcpgo.INTERNAL_ERROR, msg)
		}
	}()
	resp := c.s.HandleMessage(ctx, line)
	out, ok := answerjson.Append(dst, resp)
	if !ok {
		b, err := json.Marshal(resp)
		if err != nil {
			panic(err)
		}
		out = append(dst, b...)
	}
	return append(out, '\n')
}
