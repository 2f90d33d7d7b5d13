package j1708

import (
	"fieldtap/drivers/wire"
	"fmt"
	"time"
)

// Bus access (SAE J1708 §5, restated in TMC RP 1201 "Network Parameters"):
// a transmitter may start only after the line has been idle for one bus
// access time Ta = Ti + 2·Tb·P, where Ti is the minimum idle line (10 bit
// times), Tb one bit time and P the message priority 1..8 (1 most urgent).
// Lower priorities wait longer, so when two nodes wait for the same idle
// line the more urgent one starts first and the other sees a busy line.
const (
	// idleBits is Ti, the minimum idle line between messages, in bit times.
	idleBits = 10
	// bitsPerPriority is the 2·Tb each priority step adds to the wait.
	bitsPerPriority = 2
	// MinPriority and MaxPriority bound J1708 message priorities.
	MinPriority = 1
	MaxPriority = 8
	// DefaultPriority is the lowest: J1708 keeps 7 and 8 for messages that
	// are neither urgent nor about efficiency, and a diagnostic box must
	// yield the bus to every ECU.
	DefaultPriority = MaxPriority
)

// Write-side bounds.
const (
	// MaxAttempts bounds sends of one message: the first and two retries
	// after collisions. A bus that collides three times running has a
	// fault or a jabbering node; more tries only add to its load.
	MaxAttempts = 3
	// maxAccessWait bounds the wait for one access window. The longest
	// J1708 message lasts about 22 ms, so a bus with no idle window of at
	// most 26 bit times in a second is stuck, not busy.
	maxAccessWait = time.Second
	// DefaultEchoSlack is added to the wire time of a message when
	// waiting for its echo: USB serial adapters hand received bytes over
	// after a latency timer (FTDI's default is 16 ms), then the reader
	// must run. Only a short echo waits it out; a whole one ends the wait.
	DefaultEchoSlack = 50 * time.Millisecond
	maxEchoSlack     = 30 * time.Second // past this a short echo holds the writer for nothing
)

// AccessTime is the bus access time Ta for priority p (1..8) at baud:
// (10 + 2·p) bit times. Priority 8 at 9600 baud is 26 bit times, 2.708 ms.
func AccessTime(p, baud int) (time.Duration, error) {
	if p < MinPriority || p > MaxPriority {
		return 0, fmt.Errorf("j1708: priority %d outside %d..%d", p, MinPriority, MaxPriority)
	}
	if baud <= 0 {
		return 0, fmt.Errorf("j1708: baud %d", baud)
	}
	return bitTimes(idleBits+bitsPerPriority*p, baud), nil
}

// collisionBackoff is added once per collision already suffered: a full
// span of priorities, so a peer of any priority that collided with us
// gets the bus before our retry.
func collisionBackoff(baud int) time.Duration {
	return bitTimes(bitsPerPriority*MaxPriority, baud)
}

func bitTimes(n, baud int) time.Duration {
	return time.Duration(n) * time.Second / time.Duration(baud)
}

// idleLeft is how much longer the line must stay quiet before a send may
// start, given the last byte seen at lastRx: zero or less means now.
func idleLeft(now, lastRx time.Time, access time.Duration) time.Duration {
	return access - now.Sub(lastRx)
}

// echoVerdict is what the read-back says about one send.
type echoVerdict int

const (
	echoOK        echoVerdict = iota // every byte came back as sent
	echoCollision                    // a byte differs: another node drove the line
	echoShort                        // fewer bytes came back, all as sent: unknown
)

func (v echoVerdict) String() string {
	switch v {
	case echoOK:
		return "ok"
	case echoCollision:
		return "collision"
	}
	return "short"
}

// judgeEcho compares the bytes read back while sending with the message.
// A byte that arrived before ours (another node starting in the same
// window) shows as a difference too. It is pure.
func judgeEcho(sent, got []byte) (echoVerdict, int) {
	for i := range got {
		if i >= len(sent) || got[i] != sent[i] {
			return echoCollision, i
		}
	}
	if len(got) < len(sent) {
		return echoShort, len(got)
	}
	return echoOK, len(got)
}

// checkMessage refuses what J1708 receivers would drop anyway: a length
// outside wire.MinJ1708Message..MaxJ1708Message or bytes that do not sum to 0 mod 256.
func checkMessage(msg []byte) error {
	if len(msg) < wire.MinJ1708Message || len(msg) > wire.MaxJ1708Message {
		return fmt.Errorf("j1708: a message is %d..%d bytes with MID and checksum, got %d", wire.MinJ1708Message, wire.MaxJ1708Message, len(msg))
	}
	var sum byte
	for _, b := range msg {
		sum += b
	}
	if sum != 0 {
		return fmt.Errorf("j1708: checksum: the bytes sum to %#02x, not 0 mod 256", sum)
	}
	return nil
}
