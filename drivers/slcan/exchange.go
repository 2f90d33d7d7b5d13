package slcan

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errSessionEnded: the session closed while a command waited for its reply.
var errSessionEnded = errors.New("slcan: the adapter session ended")

// exchanger hands the reply of a command written by another goroutine
// (a transmit, a mode change) from the session's reader to the writer.
// Lawicel replies come in command order, and Source.wmu allows one
// command in flight, so the next ack or BELL is this command's.
type exchanger struct {
	mu   sync.Mutex
	wait chan string // the reply slot of the command in flight; nil when none
	done chan struct{}
}

func newExchanger() *exchanger { return &exchanger{done: make(chan struct{})} }

// deliver gives r to the command in flight and reports whether there was one.
func (x *exchanger) deliver(r string) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.wait == nil {
		return false
	}
	x.wait <- r // buffered 1; wait is cleared, so never a second send
	x.wait = nil
	return true
}

// exchange writes line (with its CR) and waits up to timeout for the reply:
// replyAck, replyBell, or replyNone after silence. The slot is registered
// before the write, so a fast reply is never missed.
func (x *exchanger) exchange(ctx context.Context, p port, line []byte, timeout time.Duration) (string, error) {
	ch := make(chan string, 1)
	x.mu.Lock()
	x.wait = ch
	x.mu.Unlock()
	clear := func() {
		x.mu.Lock()
		if x.wait == ch {
			x.wait = nil
		}
		x.mu.Unlock()
	}
	if _, err := p.Write(line); err != nil {
		clear()
		return "", err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-t.C:
		clear()
		select {
		case r := <-ch: // delivered between the timer and clear
			return r, nil
		default:
		}
		return replyNone, nil
	case <-x.done:
		clear()
		return "", errSessionEnded
	case <-ctx.Done():
		clear()
		return "", ctx.Err()
	}
}

// end wakes every waiter: the reader stopped.
func (x *exchanger) end() { close(x.done) }
