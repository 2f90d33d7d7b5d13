package front

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

// Drain bounds.
const (
	// stdioDrain bounds how long EOF on stdin waits for answers still
	// owed: longer than the longest tool (await_condition's 60 s) so none
	// is cut.
	stdioDrain = 90 * time.Second
	// ShutdownDrain bounds how long a shutdown (SIGTERM) lets calls in
	// flight finish on their own, on either transport; calls still
	// running then are cancelled, and the audit records them so.
	ShutdownDrain = 10 * time.Second
)

// drain passes stdin through line by line, counting the requests read
// (messages with an id and a method) and the answers written (an id and no
// method); at EOF it waits until every request has its answer. When ctx
// ends (a shutdown) it stops reading new requests and ends the input the
// same way, waiting at most ShutdownDrain.
type drain struct {
	ctx      context.Context
	w        io.Writer
	limit    time.Duration
	shutdown time.Duration
	lines    chan lineRead // from readLines
	quit     chan struct{} // closed once Read has ended the input

	// take, when set, is offered each line first: true means it was a
	// request the caller answers itself (through answer), not mcp-go.
	take func(line []byte) bool
	wmu  sync.Mutex // one message per write: mcp-go's and take's answers

	mu       sync.Mutex
	answered *sync.Cond
	requests int
	answers  int
	deadline time.Time // of the wait in progress
	pending  []byte    // the rest of a line not yet handed to the reader
	ended    error     // what Read returns once the input has ended
}

// lineRead is one line of the input, or why there are no more.
type lineRead struct {
	line []byte
	err  error
}

func newDrain(ctx context.Context, in io.Reader, out io.Writer, limit time.Duration) *drain {
	d := &drain{ctx: ctx, w: out, limit: limit, shutdown: ShutdownDrain, lines: make(chan lineRead), quit: make(chan struct{})}
	d.answered = sync.NewCond(&d.mu)
	go d.readLines(bufio.NewReader(in))
	return d
}

// readLines reads the input in its own goroutine, so a shutdown does not
// wait on a client that sends nothing. It ends with the input (a read
// from a terminal or pipe cannot be interrupted; the process's exit ends
// that one).
func (d *drain) readLines(r *bufio.Reader) {
	for {
		line, err := readLine(r)
		if len(line) > 0 && !d.send(lineRead{line: line}) {
			return
		}
		if err != nil {
			d.send(lineRead{err: err})
			return
		}
	}
}

// send hands l to Read, or reports that the input was ended meanwhile.
func (d *drain) send(l lineRead) bool {
	select {
	case d.lines <- l:
		return true
	case <-d.quit:
		return false
	}
}

// end makes every later Read return err.
func (d *drain) end(err error) (int, error) {
	d.ended = err
	close(d.quit)
	return 0, err
}

func (d *drain) Read(p []byte) (int, error) {
	if d.ended != nil {
		return 0, d.ended
	}
	for len(d.pending) == 0 {
		// A shutdown already begun wins over a line waiting: select
		// would pick between the two at random.
		if d.ctx.Err() != nil {
			d.wait(d.shutdown)
			return d.end(io.EOF)
		}
		select {
		case l := <-d.lines:
			if l.err != nil {
				if l.err == io.EOF {
					d.wait(d.limit)
				}
				return d.end(l.err)
			}
			if d.take != nil && d.take(l.line) {
				d.requestRead()
				continue
			}
			if id, method := shapeOf(l.line); id && method {
				d.requestRead()
			}
			d.pending = l.line
		case <-d.ctx.Done():
			// A shutdown: no new request is read; those read are owed.
			d.wait(d.shutdown)
			return d.end(io.EOF)
		}
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

// readLine reads one message line, refusing one longer than the HTTP
// body limit: the same bound on both transports.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxRequestBody {
			return nil, fmt.Errorf("stdio message longer than %d bytes", maxRequestBody)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// wait blocks until every request read has been answered or limit
// passes; a shutdown during the wait shortens it to d.shutdown from then.
func (d *drain) wait(limit time.Duration) {
	d.mu.Lock()
	d.deadline = time.Now().Add(limit)
	d.mu.Unlock()
	t := time.AfterFunc(limit, d.wake)
	defer t.Stop()
	stop := context.AfterFunc(d.ctx, func() {
		d.mu.Lock()
		if soon := time.Now().Add(d.shutdown); soon.Before(d.deadline) {
			d.deadline = soon
		}
		d.mu.Unlock()
		t.Reset(d.shutdown)
		d.wake()
	})
	defer stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.answers < d.requests && time.Now().Before(d.deadline) {
		d.answered.Wait()
	}
}

func (d *drain) wake() {
	d.mu.Lock()
	d.answered.Broadcast()
	d.mu.Unlock()
}

// shapeOf tells a request (an id and a method) from an answer (an id and
// no method) by reading the top-level keys in order and stopping at
// "result" or "error": an answer can carry no method, and scanning a
// 100 KB result to learn that cost a fifth of a list call's CPU.
func shapeOf(line []byte) (hasID, hasMethod bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false, false
		}
		switch key, _ := t.(string); key {
		case "id":
			var id json.RawMessage
			if dec.Decode(&id) != nil {
				return false, false
			}
			hasID = string(id) != "null"
		case "method":
			var m string
			if dec.Decode(&m) != nil {
				return false, false
			}
			hasMethod = m != ""
		case "result", "error":
			if hasID {
				return true, false
			}
			fallthrough
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return false, false
			}
		}
	}
	return hasID, hasMethod
}

// out counts answers as mcp-go writes them: one message per Write.
func (d *drain) out() io.Writer { return drainWriter{d} }

type drainWriter struct{ d *drain }

func (w drainWriter) Write(p []byte) (int, error) {
	w.d.wmu.Lock()
	n, err := w.d.w.Write(p)
	w.d.wmu.Unlock()
	if id, method := shapeOf(p); id && !method {
		w.d.answerWritten()
	}
	return n, err
}

// answer writes one answer line of a request take took.
func (d *drain) answer(line []byte) error {
	d.wmu.Lock()
	_, err := d.w.Write(line)
	d.wmu.Unlock()
	d.answerWritten()
	return err
}

func (d *drain) requestRead() {
	d.mu.Lock()
	d.requests++
	d.mu.Unlock()
}

func (d *drain) answerWritten() {
	d.mu.Lock()
	d.answers++
	d.answered.Broadcast()
	d.mu.Unlock()
}
