package slcan

import (
	"context"
	"fmt"
	"time"

	"go.bug.st/serial"
)

// ResetListenOnly makes the adapter passive before anything else runs:
// it opens the tty, closes the channel (C), sets the bitrate (S) and
// reopens it listen-only (L), then closes the tty, leaving the adapter
// listening without ACKs, error frames or transmits. fieldtapd calls it at
// start-up, so an adapter that a killed run left open with O stops taking
// part in the bus at once, not when its capture session gets to it. The
// capture session then opens with C, S, L as always. A refused L (an
// adapter without listen-only) leaves the channel closed and is an error;
// so is any command that fails on the line. Frames the adapter streams
// after L are read past and dropped.
func ResetListenOnly(ctx context.Context, o Options) error {
	if err := o.check(); err != nil {
		return err
	}
	rate, _ := BitrateCommand(o.Bitrate) // checked above
	p, err := serial.Open(o.Device, &serial.Mode{BaudRate: o.Baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		return fmt.Errorf("slcan: open %s: %w", o.Device, err)
	}
	defer p.Close()
	stop := context.AfterFunc(ctx, func() { p.Close() })
	defer stop()
	// Replies still queued from the killed run (the ack of its last
	// transmit) would be taken for ours: drop them first.
	if err := p.ResetInputBuffer(); err != nil {
		return fmt.Errorf("slcan: reset %s: flush: %w", o.Device, err)
	}
	var sp splitter
	for _, cmd := range []string{"C", rate, "L"} {
		r, err := resetCommand(p, &sp, cmd, o.AckTimeout)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("slcan: reset %s: %w", o.Device, ctx.Err())
			}
			return fmt.Errorf("slcan: reset %s: %s: %w", o.Device, cmd, err)
		}
		if r == replyBell && cmd != "C" { // a closed adapter may refuse C
			return fmt.Errorf("slcan: reset %s: the adapter refused %s", o.Device, cmd)
		}
	}
	return nil
}

// resetCommand writes cmd and waits up to timeout for its reply: an ack,
// a BELL, or silence (some adapters never answer; taken as an ack, as the
// capture session does). Frame lines in between are not replies.
func resetCommand(p serial.Port, sp *splitter, cmd string, timeout time.Duration) (string, error) {
	if _, err := p.Write([]byte(cmd + "\r")); err != nil {
		return "", err
	}
	buf := make([]byte, readBuffer)
	reply := ""
	for deadline := time.Now().Add(timeout); reply == ""; {
		left := time.Until(deadline)
		if left <= 0 {
			return replyNone, nil
		}
		if err := p.SetReadTimeout(left); err != nil {
			return "", err
		}
		n, err := p.Read(buf)
		if err != nil {
			return "", fmt.Errorf("read: %w", err)
		}
		sp.feed(buf[:n], func(k tokenKind, _ []byte) {
			switch {
			case reply != "":
			case k == tokAck:
				reply = replyAck
			case k == tokBell:
				reply = replyBell
			}
		})
	}
	return reply, nil
}
