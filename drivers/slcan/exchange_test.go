package slcan

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// linePort is a port that records what is written and, through before,
// lets a test look at the exchanger as each line goes out.
type linePort struct {
	mu     sync.Mutex
	lines  []string
	before func(line string)
}

func (p *linePort) Read([]byte) (int, error)           { return 0, errors.New("not read") }
func (p *linePort) SetReadTimeout(time.Duration) error { return nil }
func (p *linePort) Write(b []byte) (int, error) {
	if p.before != nil {
		p.before(string(b))
	}
	p.mu.Lock()
	p.lines = append(p.lines, string(b))
	p.mu.Unlock()
	return len(b), nil
}

// TestOwedReply: a transmit whose reply did not come in time leaves it
// owed: the next command is written only once it settled (by the reply,
// its wait, or abandon), and an owed reply never reaches another command.
func TestOwedReply(t *testing.T) {
	ctx := context.Background()
	const short = 10 * time.Millisecond
	t.Run("the late reply is the transmit's, and the next command waits for it", func(t *testing.T) {
		x := newExchanger()
		var noted []string
		d := &debt{wait: giveUp, note: func(r string) { noted = append(noted, r) }}
		p := &linePort{}
		r, late, err := x.exchange(ctx, p, []byte("t1230\r"), short, d)
		if r != replyNone || late == nil || err != nil {
			t.Fatalf("exchange = %q, %v, %v: want an owed reply", r, late, err)
		}
		p.before = func(line string) {
			select {
			case <-late.resolved:
			default:
				t.Errorf("%q written while the transmit's reply was owed", line)
			}
		}
		next := make(chan string, 1)
		go func() {
			r, _, _ := x.exchange(ctx, p, []byte("C\r"), giveUp, nil)
			next <- r
		}()
		if !x.deliver(replyBell) {
			t.Fatal("the late reply found no taker")
		}
		<-late.resolved
		if late.reply != replyBell || late.at.IsZero() || len(noted) != 1 || noted[0] != replyBell {
			t.Errorf("owed settled %q at %v, noted %v", late.reply, late.at, noted)
		}
		for deadline := time.Now().Add(giveUp); !x.deliver(replyAck); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("C was never written")
			}
		}
		if r := <-next; r != replyAck {
			t.Errorf("C got %q, want its own ack", r)
		}
	})
	t.Run("no reply within the wait", func(t *testing.T) {
		x := newExchanger()
		_, late, _ := x.exchange(ctx, &linePort{}, []byte("t1230\r"), short, &debt{wait: short, note: func(string) {}})
		select {
		case <-late.resolved:
		case <-time.After(giveUp):
			t.Fatal("the owed reply never settled")
		}
		if late.reply != replyNone || !late.at.IsZero() || x.deliver(replyAck) {
			t.Errorf("settled %q at %v; a stray ack was taken", late.reply, late.at)
		}
	})
	t.Run("closing abandons it", func(t *testing.T) {
		x := newExchanger()
		_, late, _ := x.exchange(ctx, &linePort{}, []byte("t1230\r"), short, &debt{wait: giveUp, note: func(string) {}})
		x.abandon()
		<-late.resolved
		if late.reply != replyNone {
			t.Errorf("settled %q", late.reply)
		}
	})
	t.Run("a cancelled wait owes too", func(t *testing.T) {
		x := newExchanger()
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, late, err := x.exchange(cctx, &linePort{}, []byte("t1230\r"), giveUp, &debt{wait: giveUp, note: func(string) {}})
		if late == nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("late %v, err %v", late, err)
		}
		x.end()
		<-late.resolved
	})
}
