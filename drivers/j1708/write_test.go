package j1708

import (
	"context"
	"errors"
	"fieldtap/drivers/wire"
	"testing"
	"time"
)

func TestAccessTime(t *testing.T) {
	tests := []struct {
		name     string
		priority int
		baud     int
		want     time.Duration
		wantErr  bool
	}{
		// (10 + 2·P) bit times; one bit at 9600 baud is 104.166 µs.
		{name: "priority 1", priority: 1, baud: 9600, want: 12 * time.Second / 9600},
		{name: "priority 8", priority: 8, baud: 9600, want: 26 * time.Second / 9600},
		{name: "priority 5 at 19200", priority: 5, baud: 19200, want: 20 * time.Second / 19200},
		{name: "priority 0", priority: 0, baud: 9600, wantErr: true},
		{name: "priority 9", priority: 9, baud: 9600, wantErr: true},
		{name: "no baud", priority: 8, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AccessTime(tc.priority, tc.baud)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("AccessTime(%d, %d) = %v, %v; want %v (err %v)", tc.priority, tc.baud, got, err, tc.want, tc.wantErr)
			}
		})
	}
	if b, a := collisionBackoff(9600), bitTimes(16, 9600); b != a {
		t.Errorf("collision backoff %v, want 16 bit times %v", b, a)
	}
}

func TestJudgeEcho(t *testing.T) {
	sent := []byte{0x80, 0x00, 0x80}
	tests := []struct {
		name string
		got  []byte
		want echoVerdict
		at   int
	}{
		{name: "intact", got: []byte{0x80, 0x00, 0x80}, want: echoOK, at: 3},
		{name: "MID differs", got: []byte{0x7F, 0x00, 0x80}, want: echoCollision, at: 0},
		{name: "last byte differs", got: []byte{0x80, 0x00, 0x81}, want: echoCollision, at: 2},
		{name: "a byte before ours", got: []byte{0x88, 0x80, 0x00}, want: echoCollision, at: 0},
		{name: "nothing back", got: nil, want: echoShort, at: 0},
		{name: "short but equal", got: []byte{0x80}, want: echoShort, at: 1},
		{name: "short and different", got: []byte{0x81}, want: echoCollision, at: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, at := judgeEcho(sent, tc.got)
			if v != tc.want || at != tc.at {
				t.Errorf("judgeEcho = %v at %d, want %v at %d", v, at, tc.want, tc.at)
			}
		})
	}
}

func TestCheckMessage(t *testing.T) {
	long := make([]byte, wire.MaxJ1708Message+1) // all zero: sums to 0
	tests := []struct {
		name string
		msg  []byte
		ok   bool
	}{
		{name: "MID and checksum", msg: []byte{0x80, 0x80}, ok: true},
		{name: "data", msg: []byte{0x80, 0x54, 0x00, 0x2C}, ok: true},
		{name: "bad checksum", msg: []byte{0x80, 0x54, 0x00, 0x2D}},
		{name: "one byte", msg: []byte{0x00}},
		{name: "too long", msg: long},
		{name: "longest", msg: long[:wire.MaxJ1708Message], ok: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkMessage(tc.msg); (err == nil) != tc.ok {
				t.Errorf("checkMessage(% X) = %v, want ok=%v", tc.msg, err, tc.ok)
			}
		})
	}
}

func TestEchoCollectsUpToWant(t *testing.T) {
	e := newEcho(3)
	e.add([]byte{1})
	select {
	case <-e.full:
		t.Fatal("full after 1 of 3 bytes")
	default:
	}
	e.add([]byte{2, 3, 4}) // the 4th byte is the next message: not ours
	<-e.full
	e.add([]byte{5}) // after full: ignored, no second close
	if got := e.bytes(); string(got) != "\x01\x02\x03" {
		t.Errorf("echo = % X, want 01 02 03", got)
	}
}

func TestAwaitIdle(t *testing.T) {
	src, err := New(Options{Device: "/dev/null"})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("waits for the access time after the last byte", func(t *testing.T) {
		const access = 20 * time.Millisecond
		ln := newLine(nil, time.Now())
		start := ln.last()
		if err := src.awaitIdle(context.Background(), ln, access); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < access {
			t.Errorf("sent after %v of idle, want at least %v", waited, access)
		}
	})
	t.Run("a busy line is refused and counted", func(t *testing.T) {
		ln := newLine(nil, time.Now())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { // a byte every millisecond: never 26 bit times idle
			for ctx.Err() == nil {
				ln.received([]byte{0x55}, time.Now())
				time.Sleep(time.Millisecond)
			}
		}()
		// An access time far above the feeder's period, so a loaded machine
		// that delays the feeder still never shows an idle line.
		const access = 300 * time.Millisecond
		err := src.awaitIdle(ctx, ln, access)
		if !errors.Is(err, ErrBusBusy) || src.TxStatus().Busy != 1 || src.Stats().Errors[ReasonTxBusy] != 1 {
			t.Errorf("busy line: err %v, status %+v", err, src.TxStatus())
		}
	})
}

func TestWriteFrameRefusals(t *testing.T) {
	src, err := New(Options{Device: "/dev/null"})
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte{0x80, 0x80}
	if err := src.WriteFrame(context.Background(), 0, msg); !errors.Is(err, ErrClosed) {
		t.Errorf("unopened port: %v, want ErrClosed", err)
	}
	if err := src.SetTransmit(true); !errors.Is(err, ErrClosed) || src.TxStatus().Transmit {
		t.Errorf("transmit on an unopened port: %v, want ErrClosed and still listen-only", err)
	}
	if err := src.WriteFrame(context.Background(), 0, []byte{0x80, 0x81}); err == nil {
		t.Error("a message with a bad checksum was accepted")
	}
	if _, err := New(Options{Device: "x", Priority: 9}); err == nil {
		t.Error("priority 9 accepted")
	}
}
