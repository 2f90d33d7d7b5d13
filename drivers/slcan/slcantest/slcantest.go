// Package slcantest simulates a Lawicel slcan adapter on the far end of a
// serial line (one side of a pty pair), for tests of the slcan driver and
// of fieldtapd with an slcan port.
//
// The Adapter answers the commands a capture driver sends the way a real
// adapter does, in one of a few Variants, records every command it got, and
// writes frame lines on request. It accepts transmits (t/T) only while
// open with O, records each with the mode it arrived in, and hands it to
// an attached ECU, whose answers it prints as a bus would.
package slcantest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Variant is how an adapter acknowledges commands.
type Variant struct {
	Name string
	// Ack follows an accepted command: "\r" for most adapters, "" for
	// ones that never answer.
	Ack string
	// BellOnCloseWhenClosed answers C with BELL when the channel is
	// already closed, as the USBtin does.
	BellOnCloseWhenClosed bool
	// NoListenOnly refuses L with BELL (firmware without listen-only).
	NoListenOnly bool
	// ZAck acknowledges a transmit with z (t) or Z (T) and a CR, as
	// Lawicel's own firmware and the USBtin do; otherwise with Ack.
	ZAck bool
	// BusOff refuses every transmit with BELL, as an adapter whose
	// controller went bus-off does.
	BusOff bool
}

// Variants seen in the field (DESIGN §8).
var (
	CANable = Variant{Name: "canable", Ack: "\r"}
	USBtin  = Variant{Name: "usbtin", Ack: "\r", BellOnCloseWhenClosed: true, ZAck: true}
	Silent  = Variant{Name: "silent"}
	NoL     = Variant{Name: "no-listen-only", Ack: "\r", NoListenOnly: true}
	BusOff  = Variant{Name: "bus-off", Ack: "\r", BusOff: true}
)

const bell = "\a"

// Adapter is a simulated slcan adapter talking over rw.
type Adapter struct {
	rw io.ReadWriter
	v  Variant

	mu       sync.Mutex
	cmds     []string
	mode     string // "closed", "listen", "normal"
	bitrate  string // last S command
	opened   chan struct{}
	openOnce sync.Once
	wmu      sync.Mutex
	rx       []Received
	ecu      *ECU
	// hold, when set, withholds the reply to the next transmit until it
	// is closed (HoldNextTransmitReply).
	hold chan struct{}

	// Witness, if set before Serve, sees every command before it is
	// answered (a test reads the arm input there).
	Witness func(cmd string)
}

// Received is one transmit the host sent, with the adapter's mode then.
type Received struct {
	ID       uint32 // without flag bits
	Ext      bool
	Data     []byte
	Mode     string // "normal" when accepted; "listen" or "closed" were refused with BELL
	Accepted bool
}

// New returns an adapter in the closed state.
func New(rw io.ReadWriter, v Variant) *Adapter {
	return &Adapter{rw: rw, v: v, mode: "closed", opened: make(chan struct{})}
}

// Serve answers commands until rw fails or ctx ends (close rw to stop a
// pending read). It returns nil on EOF or cancellation.
func (a *Adapter) Serve(ctx context.Context) error {
	br := bufio.NewReader(a.rw)
	for ctx.Err() == nil {
		line, err := br.ReadString('\r')
		if err != nil {
			if ctx.Err() != nil || err == io.EOF {
				return nil
			}
			return err
		}
		cmd := strings.TrimRight(line, "\r")
		if cmd == "" {
			continue // the CRs a driver sends to flush a half command
		}
		if a.Witness != nil {
			a.Witness(cmd)
		}
		reply, replies, hold := a.answer(cmd)
		if hold != nil {
			select {
			case <-hold:
			case <-ctx.Done():
				return nil
			}
		}
		if err := a.write(reply); err != nil {
			return err
		}
		if (cmd == "L" || cmd == "O") && a.Mode() != "closed" {
			// Only once the acknowledgement is on the line: a frame a
			// test writes on seeing Opened must come after it, or the
			// driver, still waiting for it, counts the frame before_open.
			a.openOnce.Do(func() { close(a.opened) })
		}
		if len(replies) > 0 {
			go a.play(ctx, replies)
		}
	}
	return nil
}

// play puts an ECU's answer on the line at the ECU's pace. A closed
// channel forwards nothing, as a real adapter would.
func (a *Adapter) play(ctx context.Context, rs []Reply) {
	for _, r := range rs {
		select {
		case <-ctx.Done():
			return
		case <-time.After(r.Delay):
		}
		if a.Mode() == "closed" {
			continue
		}
		if a.write(FrameLine(r.ID, r.Ext, false, r.Data, -1)) != nil {
			return
		}
	}
}

// answer updates the adapter's state for cmd and returns its reply, for
// an accepted transmit the attached ECU's answer, and for a held transmit
// what releases its reply.
func (a *Adapter) answer(cmd string) (string, []Reply, chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cmds = append(a.cmds, cmd)
	if cmd[0] == 't' || cmd[0] == 'T' {
		reply, replies := a.transmit(cmd)
		hold := a.hold
		a.hold = nil
		return reply, replies, hold
	}
	return a.command(cmd), nil, nil
}

// HoldNextTransmitReply makes the adapter withhold its reply to the next
// transmit (the ack, or BELL) until release is called, as an adapter
// whose controller waits for the bus answers late. It reads no command
// meanwhile, so the replies after it stay in order.
func (a *Adapter) HoldNextTransmitReply() (release func()) {
	hold := make(chan struct{})
	a.mu.Lock()
	a.hold = hold
	a.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(hold) }) }
}

// transmit handles a t/T line: accepted only while open with O.
func (a *Adapter) transmit(cmd string) (string, []Reply) {
	id, ext, data, ok := parseTransmit(cmd)
	if !ok {
		return bell, nil
	}
	r := Received{ID: id, Ext: ext, Data: data, Mode: a.mode, Accepted: a.mode == "normal" && !a.v.BusOff}
	a.rx = append(a.rx, r)
	if !r.Accepted {
		return bell, nil
	}
	var replies []Reply
	if a.ecu != nil {
		replies = a.ecu.Handle(id, ext, data)
	}
	switch {
	case !a.v.ZAck:
		return a.v.Ack, replies
	case ext:
		return "Z\r", replies
	}
	return "z\r", replies
}

// command handles a control command.
func (a *Adapter) command(cmd string) string {
	switch {
	case cmd == "C":
		if a.mode == "closed" && a.v.BellOnCloseWhenClosed {
			return bell
		}
		a.mode = "closed"
	case len(cmd) == 2 && cmd[0] == 'S' && cmd[1] >= '0' && cmd[1] <= '8':
		if a.mode != "closed" {
			return bell
		}
		a.bitrate = cmd
	case cmd == "L":
		if a.v.NoListenOnly || a.mode != "closed" {
			return bell
		}
		a.mode = "listen"
	case cmd == "O":
		if a.mode != "closed" {
			return bell
		}
		a.mode = "normal"
	case cmd == "V":
		return "V1013\r"
	default:
		return bell
	}
	return a.v.Ack
}

// AttachECU puts e on the simulated bus: it sees every accepted transmit.
func (a *Adapter) AttachECU(e *ECU) {
	a.mu.Lock()
	a.ecu = e
	a.mu.Unlock()
}

// Received returns every transmit line the host sent, in order.
func (a *Adapter) Received() []Received {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Received(nil), a.rx...)
}

// Opened is closed once the channel was opened (by L or O) and the
// acknowledgement written.
func (a *Adapter) Opened() <-chan struct{} { return a.opened }

// Commands returns every command received, in order, without CRs.
func (a *Adapter) Commands() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.cmds...)
}

// Mode is "closed", "listen" or "normal".
func (a *Adapter) Mode() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mode
}

// Bitrate is the last S command accepted ("S5"), or "".
func (a *Adapter) Bitrate() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bitrate
}

// Write puts raw bytes on the line, as the adapter's UART would.
func (a *Adapter) Write(b []byte) error { return a.write(string(b)) }

func (a *Adapter) write(s string) error {
	if s == "" {
		return nil
	}
	a.wmu.Lock()
	defer a.wmu.Unlock()
	_, err := io.WriteString(a.rw, s)
	return err
}

// FrameLine formats a frame line with its CR. ext and rtr pick t/T/r/R;
// ts < 0 leaves the timestamp out, otherwise it is ts mod 60000 as four hex
// digits. A remote frame carries len(data) as its DLC but no data.
func FrameLine(id uint32, ext, rtr bool, data []byte, ts int) string {
	var b strings.Builder
	switch {
	case !ext && !rtr:
		fmt.Fprintf(&b, "t%03X", id)
	case ext && !rtr:
		fmt.Fprintf(&b, "T%08X", id)
	case !ext:
		fmt.Fprintf(&b, "r%03X", id)
	default:
		fmt.Fprintf(&b, "R%08X", id)
	}
	fmt.Fprintf(&b, "%d", len(data))
	if !rtr {
		fmt.Fprintf(&b, "%X", data)
	}
	if ts >= 0 {
		fmt.Fprintf(&b, "%04X", ts%60000)
	}
	b.WriteByte('\r')
	return b.String()
}

// parseTransmit reads t/T lines: id digits, DLC, data.
func parseTransmit(cmd string) (id uint32, ext bool, data []byte, ok bool) {
	digits := 3
	if cmd[0] == 'T' {
		digits, ext = 8, true
	}
	if len(cmd) < 2+digits {
		return 0, false, nil, false
	}
	v, err := strconv.ParseUint(cmd[1:1+digits], 16, 32)
	n := int(cmd[1+digits] - '0')
	if err != nil || n < 0 || n > 8 || len(cmd) != 2+digits+2*n {
		return 0, false, nil, false
	}
	for i := range n {
		b, err := strconv.ParseUint(cmd[2+digits+2*i:4+digits+2*i], 16, 8)
		if err != nil {
			return 0, false, nil, false
		}
		data = append(data, byte(b))
	}
	return uint32(v), ext, data, true
}
