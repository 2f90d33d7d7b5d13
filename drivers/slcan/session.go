package slcan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.bug.st/serial"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/devwatch"
	"fieldtap/drivers/wire"
)

// readBuffer is one read: a USB CDC packet is 64 bytes, and a busy bus
// delivers a few packets between reads.
const readBuffer = 1024

// Replies an init command can get.
const (
	replyAck  = "ack"
	replyBell = "bell"
	replyNone = "none" // silent adapters; taken as an ack
)

// port is the part of serial.Port a session uses.
type port interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	SetReadTimeout(t time.Duration) error
}

// session is one open of the adapter: init commands, then frames.
type session struct {
	s   *Source
	p   port
	out *capture.Handoff
	sp  splitter

	waiting string // command awaiting its reply; "" once open
	reply   string
	open    bool
	now     time.Time // receive time of the current read

	lastTS   int // adapter timestamp of the previous frame, -1 if none
	lastHost time.Time

	// x carries replies to commands other goroutines write once the
	// channel is open (transmits, mode changes).
	x *exchanger
	// acks: the adapter acknowledged L, so silence after a transmit is a
	// fault, not its habit.
	acks bool
}

// run1 is one session: open the tty, init the adapter, read until an error
// or ctx ends.
func (s *Source) run1(ctx context.Context, out *capture.Handoff) error {
	s.update(func(st *Status) {
		*st = Status{Sent: st.Sent, Refused: st.Refused, Sessions: st.Sessions + 1, Bitrate: s.opts.Bitrate, Replies: map[string]string{}, LastError: st.LastError}
	})
	p, err := serial.Open(s.opts.Device, &serial.Mode{BaudRate: s.opts.Baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		s.counters.Error(ReasonOpen)
		return fmt.Errorf("slcan: open %s: %w", s.opts.Device, err)
	}
	stop := context.AfterFunc(ctx, func() {
		// Leave the adapter closed, then unblock the pending read. A
		// failed C is harmless: the next session starts with C too.
		p.Write([]byte("C\r"))
		p.Close()
	})
	defer stop()
	defer p.Close()
	node, _ := devwatch.Node(s.opts.Device) // 0 when unknown: Probe then looks at presence only
	s.node.Store(node)
	defer func() {
		s.node.Store(0)
		s.counters.Closed()
	}()
	ss := &session{s: s, p: p, out: out, lastTS: -1, x: newExchanger()}
	defer ss.x.end()
	defer s.setSession(ss, nil)
	err = ss.run(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// read is one read; a failure is counted unless ctx closed the port.
func (ss *session) read(ctx context.Context, buf []byte) (int, error) {
	n, err := ss.p.Read(buf)
	if err != nil && ctx.Err() == nil {
		ss.s.counters.Error(ReasonRead)
		return 0, fmt.Errorf("slcan: read %s: %w", ss.s.opts.Device, err)
	}
	ss.now = time.Now()
	return n, err
}

func (ss *session) run(ctx context.Context) error {
	// Close first: an adapter left open by an earlier run refuses S.
	// A closed adapter may answer C with BELL, which is fine.
	if _, err := ss.command(ctx, "C"); err != nil {
		return err
	}
	r, err := ss.command(ctx, ss.s.bitrateC)
	if err != nil {
		return err
	}
	if r == replyBell {
		ss.s.counters.Error(ReasonBitrate)
		return fmt.Errorf("slcan: %s: adapter refused %s (bitrate %d)", ss.s.opts.Device, ss.s.bitrateC, ss.s.opts.Bitrate)
	}
	// L opens listen-only: no ACK, no error frames, no transmit. The
	// port is never opened with O.
	if r, err = ss.command(ctx, "L"); err != nil {
		return err
	}
	if r == replyBell {
		ss.s.counters.Error(ReasonNotListen)
		return fmt.Errorf("slcan: %s: adapter refused listen-only (L); not opening the channel", ss.s.opts.Device)
	}
	ss.s.update(func(st *Status) { st.Open, st.ListenOnly = true, true })
	ss.s.counters.Opened(time.Now())
	if err := ss.p.SetReadTimeout(ss.s.opts.IdlePoll); err != nil {
		return err
	}
	ss.acks = r == replyAck
	ss.s.setSession(nil, ss) // from here on, writers may use the port
	buf := make([]byte, readBuffer)
	for ctx.Err() == nil {
		n, err := ss.read(ctx, buf)
		if err != nil {
			return err
		}
		ss.sp.feed(buf[:n], ss.token)
	}
	return nil
}

// command sends cmd and waits up to AckTimeout for its reply. Frame lines
// that arrive meanwhile are handled by token; after L's ack they are
// frames already.
func (ss *session) command(ctx context.Context, cmd string) (string, error) {
	ss.waiting, ss.reply = cmd, ""
	if _, err := ss.p.Write([]byte(cmd + "\r")); err != nil {
		return "", err
	}
	buf := make([]byte, readBuffer)
	deadline := time.Now().Add(ss.s.opts.AckTimeout)
	for ss.reply == "" {
		left := time.Until(deadline)
		if left <= 0 {
			ss.setReply(replyNone)
			break
		}
		if err := ss.p.SetReadTimeout(left); err != nil {
			return "", err
		}
		n, err := ss.read(ctx, buf)
		if err != nil {
			return "", err
		}
		ss.sp.feed(buf[:n], ss.token)
	}
	r := ss.reply
	ss.s.update(func(st *Status) { st.Replies[cmd] = r })
	return r, nil
}

// setReply records the reply to the waiting command. Opening is decided
// here, not after command returns, so frames in the same read as L's ack
// are captured.
func (ss *session) setReply(r string) {
	if ss.waiting == "L" && r != replyBell {
		ss.open = true
	}
	ss.waiting, ss.reply = "", r
}

// token handles one token from the splitter.
func (ss *session) token(k tokenKind, line []byte) {
	switch k {
	case tokAck:
		if ss.waiting != "" {
			ss.setReply(replyAck)
		} else {
			ss.x.deliver(replyAck) // a stray ack is tolerated
		}
	case tokBell:
		// A refused init command is judged by command (C may be
		// refused harmlessly), a refused transmit by WriteFrame; any
		// other BELL is an error.
		switch {
		case ss.waiting != "":
			ss.setReply(replyBell)
		case !ss.x.deliver(replyBell):
			ss.s.counters.Error(ReasonBell)
		}
	case tokOverlong:
		ss.s.counters.Error(ReasonOverlong)
	case tokLine:
		ss.line(line)
	}
}

func (ss *session) line(line []byte) {
	f, err := parseLine(line)
	if err != nil {
		var le *LineError
		if errors.As(err, &le) {
			ss.s.counters.Error(le.Reason)
		}
		return
	}
	if !ss.open && ss.waiting == "L" {
		// A silent adapter streams right after L: its first frame is
		// the acknowledgement it never sends.
		ss.setReply(replyNone)
	}
	if !ss.open {
		ss.s.counters.Drop(DropBeforeOpen, 1)
		return
	}
	if f.Timestamp >= 0 {
		if ss.lastTS >= 0 && reordered(ss.lastTS, f.Timestamp, ss.now.Sub(ss.lastHost)) {
			ss.s.counters.Error(ReasonReorder) // still delivered: it is a real frame
		}
		ss.lastTS, ss.lastHost = f.Timestamp, ss.now
	}
	b, err := wire.EncodeCAN(f.ID, f.Payload())
	if err != nil { // cannot happen: parseLine bounds Len
		ss.s.counters.Error(ReasonLength)
		return
	}
	ss.out.Offer(capture.Frame{Time: ss.now, Link: wire.LinkCANSocketCAN, Data: b})
	if tap := ss.s.tap.Load(); tap != nil {
		(*tap)(ss.now, f.ID, f.Payload())
	}
}

// reordered reports whether adapter timestamp ts lies before prev although
// the host saw only elapsed pass. Timestamps wrap at TimestampWrap, so
// "before" means a forward step of more than half a wrap that the host's
// clock cannot account for.
func reordered(prev, ts int, elapsed time.Duration) bool {
	step := (ts - prev + TimestampWrap) % TimestampWrap
	half := TimestampWrap / 2
	return step > half && elapsed < time.Duration(half)*time.Millisecond
}
