package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// stdioDrain bounds how long EOF on stdin waits for answers still owed:
// longer than the longest tool (await_condition's 60 s) so none is cut.
const stdioDrain = 90 * time.Second

// drain passes stdin through line by line, counting the requests read
// (messages with an id and a method) and the answers written (an id and no
// method); at EOF it waits until every request has its answer.
type drain struct {
	ctx   context.Context
	r     *bufio.Reader
	w     io.Writer
	limit time.Duration

	mu       sync.Mutex
	answered *sync.Cond
	requests int
	answers  int
	pending  []byte // the rest of a line not yet handed to the reader
}

func newDrain(ctx context.Context, in io.Reader, out io.Writer, limit time.Duration) *drain {
	d := &drain{ctx: ctx, r: bufio.NewReader(in), w: out, limit: limit}
	d.answered = sync.NewCond(&d.mu)
	return d
}

// rpcShape is the part of a JSON-RPC message that tells requests from answers.
type rpcShape struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func shapeOf(line []byte) (hasID, hasMethod bool) {
	var m rpcShape
	if json.Unmarshal(bytes.TrimSpace(line), &m) != nil {
		return false, false
	}
	return len(m.ID) > 0 && string(m.ID) != "null", m.Method != ""
}

func (d *drain) Read(p []byte) (int, error) {
	if len(d.pending) == 0 {
		line, err := d.readLine()
		if len(line) > 0 {
			if id, method := shapeOf(line); id && method {
				d.mu.Lock()
				d.requests++
				d.mu.Unlock()
			}
			d.pending = line
		}
		if len(line) == 0 && err != nil {
			if err == io.EOF {
				d.wait()
			}
			return 0, err
		}
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

// readLine reads one message line, refusing one longer than the HTTP
// body limit: the same bound on both transports.
func (d *drain) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := d.r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxRequestBody {
			return nil, fmt.Errorf("stdio message longer than %d bytes", maxRequestBody)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// wait blocks until every request has been answered, the limit passes or
// ctx ends.
func (d *drain) wait() {
	stop := context.AfterFunc(d.ctx, d.wake)
	defer stop()
	t := time.AfterFunc(d.limit, d.wake)
	defer t.Stop()
	deadline := time.Now().Add(d.limit)
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.answers < d.requests && d.ctx.Err() == nil && time.Now().Before(deadline) {
		d.answered.Wait()
	}
}

func (d *drain) wake() {
	d.mu.Lock()
	d.answered.Broadcast()
	d.mu.Unlock()
}

// out counts answers as mcp-go writes them: one message per Write.
func (d *drain) out() io.Writer { return drainWriter{d} }

type drainWriter struct{ d *drain }

func (w drainWriter) Write(p []byte) (int, error) {
	n, err := w.d.w.Write(p)
	if id, method := shapeOf(p); id && !method {
		w.d.mu.Lock()
		w.d.answers++
		w.d.answered.Broadcast()
		w.d.mu.Unlock()
	}
	return n, err
}
