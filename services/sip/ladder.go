package sip

import (
	"fmt"
	"net/netip"
	"strings"
)

// Ladder layout.
const (
	ladderLaneWidth = 36 // columns per lane: room for a request line; a long "[v6]:port" is shortened
	ladderTimeWidth = 11 // "+12345.678 "
	// MaxLadderLanes bounds the width; endpoints past it share the last
	// lane, labelled "others".
	MaxLadderLanes = 6
)

// RenderLadder draws d's kept messages as a text ladder: one lane per
// endpoint in order of appearance, one arrow per message with its start
// line, times relative to the first message. Retransmissions are marked
// (rtx); messages whose bytes were evicted say so. At most maxMessages
// arrows are drawn; the rest are counted at the end.
func RenderLadder(sn *Snapshot, d *Dialog, maxMessages int) string {
	var msgs []*Message
	evicted := 0
	for _, seq := range d.Messages() {
		if m, ok := sn.Message(seq); ok {
			msgs = append(msgs, m)
		} else {
			evicted++
		}
	}
	var lanes []netip.AddrPort
	lane := func(a netip.AddrPort) int {
		for i, l := range lanes {
			if l == a {
				return i
			}
		}
		if len(lanes) < MaxLadderLanes {
			lanes = append(lanes, a)
			return len(lanes) - 1
		}
		return MaxLadderLanes - 1
	}
	for _, m := range msgs {
		lane(m.Src)
		lane(m.Dst)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Call-ID: %s  (%d messages kept", d.CallID, len(msgs))
	if evicted > 0 || d.MessagesShed > 0 {
		fmt.Fprintf(&b, ", %d evicted, %d past the per-dialog cap", evicted, d.MessagesShed)
	}
	b.WriteString(")\n")
	b.WriteString(strings.Repeat(" ", ladderTimeWidth))
	for i, l := range lanes {
		name := l.String()
		if i == MaxLadderLanes-1 && len(lanes) == MaxLadderLanes {
			name += " +others"
		}
		b.WriteString(center(name, ladderLaneWidth))
	}
	b.WriteString("\n")
	if len(msgs) == 0 {
		return b.String()
	}
	t0 := msgs[0].Time
	for i, m := range msgs {
		if i == maxMessages {
			fmt.Fprintf(&b, "… %d more messages not drawn\n", len(msgs)-maxMessages)
			break
		}
		label := startLine(m.Raw)
		if m.Retransmission {
			label += " (rtx)"
		}
		fmt.Fprintf(&b, "%+*.3f ", ladderTimeWidth-1, m.Time.Sub(t0).Seconds())
		b.WriteString(arrow(len(lanes), lane(m.Src), lane(m.Dst), label))
		b.WriteString("\n")
	}
	return b.String()
}

// arrow draws one row: a bar at every lane's centre, and between from and
// to a line carrying label with its head at to.
func arrow(n, from, to int, label string) string {
	row := []rune(strings.Repeat(" ", n*ladderLaneWidth))
	mid := func(i int) int { return i*ladderLaneWidth + ladderLaneWidth/2 }
	for i := range n {
		row[mid(i)] = '|'
	}
	if from == to {
		copy(row[mid(from)+1:], []rune(truncate(" ⟲ "+label, len(row)-mid(from)-1)))
		return strings.TrimRight(string(row), " ")
	}
	l, r := min(from, to), max(from, to)
	for c := mid(l) + 1; c < mid(r); c++ {
		row[c] = '-'
	}
	if from < to {
		row[mid(r)-1] = '>'
	} else {
		row[mid(l)+1] = '<'
	}
	copy(row[mid(l)+2:], []rune(truncate(label, mid(r)-mid(l)-4)))
	return strings.TrimRight(string(row), " ")
}

func truncate(s string, n int) string {
	r := []rune(s)
	if n <= 0 {
		return ""
	}
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func center(s string, w int) string {
	s = truncate(s, w-1)
	pad := w - len([]rune(s))
	return strings.Repeat(" ", pad/2) + s + strings.Repeat(" ", pad-pad/2)
}

func startLine(raw []byte) string {
	for i, c := range raw {
		if c == '\r' || c == '\n' {
			return string(raw[:i])
		}
	}
	return string(raw)
}
