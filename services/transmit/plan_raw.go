package transmit

import (
	"fmt"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
)

// CANSend plans frames given byte for byte. It is actuate-class at least:
// arbitrary frames can command anything on the bus.
func CANSend(port string, frames []Frame) Spec {
	return Spec{
		Port: port, Medium: MediumCAN, Tool: "can_send",
		Summary: fmt.Sprintf("%d raw CAN frame(s) as given", len(frames)),
		Frames:  frames,
		Preconditions: []string{
			"you know what every id and data byte commands on this vehicle",
		},
		Unknowns: []string{
			"what any receiver does with these frames",
			"whether a real ECU sends the same id at the same time (two senders of one id corrupt each other's frames)",
		},
	}
}

// Window selects stored frames for a replay.
type Window struct {
	Since, Until time.Time // zero: unbounded
	ID, Mask     uint32    // match (id & mask) == (ID & mask); Mask 0 matches all
	Max          int       // frames at most; 0 means MaxFrames
}

// Replay plans a captured window of one CAN port, with the captured gaps
// as delays. It refuses a window with more than Max frames rather than
// replaying part of it silently.
func Replay(port *canbus.Port, target string, w Window) (Spec, error) {
	limit := w.Max
	if limit <= 0 || limit > MaxFrames {
		limit = MaxFrames
	}
	var frames []Frame
	var last time.Time
	var skipped, matched int
	port.Frames().Range(0, func(_ uint64, r canbus.Record) bool {
		if (!w.Since.IsZero() && r.Time.Before(w.Since)) || (!w.Until.IsZero() && !r.Time.Before(w.Until)) {
			return true
		}
		id := r.ID &^ (wire.CANRTR | wire.CANERR)
		if w.Mask != 0 && (id&wire.CANEFFMask)&w.Mask != w.ID&w.Mask {
			return true
		}
		if r.ID&(wire.CANRTR|wire.CANERR) != 0 {
			skipped++
			return true
		}
		matched++
		if len(frames) == limit {
			return true
		}
		var d time.Duration
		if !last.IsZero() {
			d = min(max(r.Time.Sub(last), 0), MaxDelay)
		}
		last = r.Time
		frames = append(frames, Frame{ID: id, Data: append([]byte(nil), r.Payload()...), Delay: d})
		return true
	})
	switch {
	case matched == 0:
		return Spec{}, fmt.Errorf("no stored data frame on %s matches the window", port.Name())
	case matched > limit:
		return Spec{}, fmt.Errorf("the window holds %d frames, more than the %d a plan may replay: narrow since/until or the id", matched, limit)
	}
	sp := Spec{
		Port: target, Medium: MediumCAN, Tool: "replay_frames",
		Summary: fmt.Sprintf("replay %d frame(s) captured on %s with their captured timing", len(frames), port.Name()),
		Frames:  frames,
		Preconditions: []string{
			"the vehicle is in a state where the replayed commands are safe (replayed frames repeat whatever they commanded)",
		},
		Unknowns: []string{
			"the vehicle state the frames were captured in; counters and checksums inside frames may be stale and rejected",
			"real ECUs keep sending the same ids, so receivers see both",
		},
	}
	if skipped > 0 {
		sp.Unknowns = append(sp.Unknowns, fmt.Sprintf("%d remote or error frames in the window are not replayed", skipped))
	}
	return sp, nil
}

// J1708Send plans one J1708 message: MID, data, and the checksum added
// (two's complement of the byte sum, so all bytes sum to 0 mod 256).
func J1708Send(port string, mid byte, data []byte) (Spec, error) {
	if len(data)+2 > MaxJ1708 {
		return Spec{}, fmt.Errorf("%d data bytes: a J1708 message holds at most %d with MID and checksum", len(data), MaxJ1708)
	}
	msg := append([]byte{mid}, data...)
	var sum byte
	for _, b := range msg {
		sum += b
	}
	msg = append(msg, -sum)
	return Spec{
		Port: port, Medium: MediumJ1708, Tool: "j1708_send",
		Summary: fmt.Sprintf("one J1708 message from MID %d (%d data bytes, checksum %02X added)", mid, len(data), msg[len(msg)-1]),
		Frames:  []Frame{{ID: IDJ1708, Data: msg}},
		Preconditions: []string{
			fmt.Sprintf("no ECU on the bus uses MID %d (a clash confuses receivers)", mid),
		},
		Unknowns: []string{
			"bus access: the driver waits for idle time by priority and reads back its own bytes; a collision is counted and the message resent up to 3 times in all, then reported",
			"whether any ECU acts on or answers the message",
		},
	}, nil
}
