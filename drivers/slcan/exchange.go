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
	// owed is a transmit whose writer stopped waiting for its reply (the
	// slot stays in wait); nothing is written until it settles.
	owed *owed
	done chan struct{}
}

// owed is the reply to a transmit that came after its writer gave up, or
// none. Since nothing else is written meanwhile, a reply that comes is
// this transmit's, not the next command's.
type owed struct {
	slot     chan string
	timer    *time.Timer
	resolved chan struct{} // closed once reply and at are set and noted
	reply    string        // replyAck, replyBell, or replyNone
	at       time.Time     // when the reply came; zero for none
	note     func(reply string)
}

// debt is how long a transmit's reply stays owed after its writer gave
// up, and who hears it when it settles (once, under the exchanger's
// lock: it only counts).
type debt struct {
	wait time.Duration
	note func(reply string)
}

func newExchanger() *exchanger { return &exchanger{done: make(chan struct{})} }

// deliver gives r to the command in flight, or to the transmit that owes
// it, and reports whether there was one.
func (x *exchanger) deliver(r string) bool {
	x.mu.Lock()
	if x.wait == nil {
		x.mu.Unlock()
		return false
	}
	x.wait <- r // buffered 1; wait is cleared, so never a second send
	if o := x.owed; o != nil && o.slot == x.wait {
		o.reply, o.at = r, time.Now()
		x.settled(o)
	}
	x.wait = nil
	x.mu.Unlock()
	return true
}

// settled detaches o, tells its note and wakes whoever waits for it, in
// one step under x.mu: the next command is written, and a waiter wakes,
// only with the reply counted. note must not call back into x.
func (x *exchanger) settled(o *owed) {
	x.owed = nil
	o.timer.Stop()
	o.note(o.reply)
	close(o.resolved)
}

// exchange writes line (with its CR) and waits up to timeout for the reply:
// replyAck, replyBell, or replyNone after silence. The slot is registered
// before the write, so a fast reply is never missed. A reply still owed
// by an earlier transmit is waited for first. With a debt (a transmit),
// a written line whose reply did not come in time (or whose wait ctx
// ended) stays owed for d.wait: the returned *owed settles when it comes.
func (x *exchanger) exchange(ctx context.Context, p port, line []byte, timeout time.Duration, d *debt) (string, *owed, error) {
	x.mu.Lock()
	prev := x.owed
	x.mu.Unlock()
	if prev != nil {
		select {
		case <-prev.resolved:
		case <-x.done:
			return "", nil, errSessionEnded
		case <-ctx.Done():
			return "", nil, ctx.Err()
		}
	}
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
		return "", nil, err
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	var cause error
	select {
	case r := <-ch:
		return r, nil, nil
	case <-t.C:
	case <-x.done:
		clear()
		if d != nil { // written, and no reply can come now
			o := &owed{resolved: make(chan struct{}), reply: replyNone}
			close(o.resolved)
			return replyNone, o, errSessionEnded
		}
		return "", nil, errSessionEnded
	case <-ctx.Done():
		cause = ctx.Err()
	}
	if d == nil {
		clear()
		select {
		case r := <-ch: // delivered between the timer and clear
			return r, nil, nil
		default:
		}
		return replyNone, nil, cause
	}
	r, o := x.owe(ch, d)
	return r, o, cause
}

// owe keeps slot ch for a reply that may still come, for d.wait; the
// reply if it came meanwhile.
func (x *exchanger) owe(ch chan string, d *debt) (string, *owed) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.wait != ch {
		return <-ch, nil // delivered after the timer fired
	}
	o := &owed{slot: ch, resolved: make(chan struct{}), reply: replyNone, note: d.note}
	o.timer = time.AfterFunc(d.wait, func() { x.settle(o) })
	x.owed = o
	return replyNone, o
}

// settle ends o with no reply: its wait passed, the channel is being
// closed, or the session ended.
func (x *exchanger) settle(o *owed) {
	x.mu.Lock()
	if x.owed != o {
		x.mu.Unlock()
		return
	}
	if x.wait == o.slot {
		x.wait = nil
	}
	x.settled(o)
	x.mu.Unlock()
}

// abandon stops waiting for an owed reply: closing the channel must not
// wait behind it. A reply that still comes then is taken for the close's.
func (x *exchanger) abandon() {
	x.mu.Lock()
	o := x.owed
	x.mu.Unlock()
	if o != nil {
		x.settle(o)
	}
}

// end wakes every waiter: the reader stopped.
func (x *exchanger) end() {
	close(x.done)
	x.abandon()
}
