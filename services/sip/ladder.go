package sip

import (
	"fmt"
	"net/netip"
	"strings"
)

// Ladder layout.
const (
	ladderLaneWidth = 36 // columns per lane: room for "#499 183 Session Progress (INVITE)"; a long "[v6]:port" is shortened
	ladderTimeWidth = 11 // "+12345.678 "
	// MaxLadderLanes bounds the width; endpoints past it share the last
	// lane, labelled "others".
	MaxLadderLanes = 6
)

// Ladder is one dialog drawn as a text ladder. Drawing holds only what
// the box computed: lanes (IP:port endpoints), times since the first
// message, arrows, and labels made of the message's index, its method (a
// token the parser checked) or its status code with the code's standard
// meaning (StatusText), never the reason phrase a sender wrote. What the
// senders wrote is apart in Arrows, so an answer can show the drawing
// bare and fence the start lines.
type Ladder struct {
	Drawing string
	Arrows  []LadderArrow // the messages drawn, in order
	Kept    int           // messages whose bytes the store still holds
	Evicted int           // messages whose bytes the store's byte bound evicted
	Shed    int           // messages past the per-dialog cap (counted, never kept)
	Undrawn int           // kept messages past maxMessages
}

// LadderArrow is one drawn message: the index get_message takes and the
// start line as the sender wrote it (sender text).
type LadderArrow struct {
	Index     int
	StartLine string
}

// RenderLadder draws d's kept messages: one lane per endpoint in order of
// appearance, one arrow per message labelled "#index METHOD" or "#index
// CODE Meaning (CSeq method)", times relative to the first message.
// Retransmissions are marked (rtx). At most maxMessages arrows are
// drawn; the rest are counted.
func RenderLadder(sn *Snapshot, d *Dialog, maxMessages int) Ladder {
	var msgs []*Message
	lad := Ladder{Arrows: []LadderArrow{}, Shed: d.MessagesShed}
	for _, seq := range d.Messages() {
		if m, ok := sn.Message(seq); ok {
			msgs = append(msgs, m)
		} else {
			lad.Evicted++
		}
	}
	lad.Kept = len(msgs)
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
	fmt.Fprintf(&b, "%d messages kept", len(msgs))
	if lad.Evicted > 0 || lad.Shed > 0 {
		fmt.Fprintf(&b, ", %d evicted, %d past the per-dialog cap", lad.Evicted, lad.Shed)
	}
	b.WriteString("\n")
	b.WriteString(strings.Repeat(" ", ladderTimeWidth))
	for i, l := range lanes {
		name := l.String()
		if i == MaxLadderLanes-1 && len(lanes) == MaxLadderLanes {
			name += " +others"
		}
		b.WriteString(center(name, ladderLaneWidth))
	}
	b.WriteString("\n")
	if len(msgs) > 0 {
		t0 := msgs[0].Time
		for i, m := range msgs {
			if i == maxMessages {
				lad.Undrawn = len(msgs) - maxMessages
				fmt.Fprintf(&b, "… %d more messages not drawn\n", lad.Undrawn)
				break
			}
			fmt.Fprintf(&b, "%+*.3f ", ladderTimeWidth-1, m.Time.Sub(t0).Seconds())
			b.WriteString(arrow(len(lanes), lane(m.Src), lane(m.Dst), arrowLabel(m)))
			b.WriteString("\n")
			lad.Arrows = append(lad.Arrows, LadderArrow{Index: m.Index, StartLine: m.StartLine()})
		}
	}
	lad.Drawing = b.String()
	return lad
}

// arrowLabel is the box's own label of m: its index, then its method or
// its status code with the code's meaning and the CSeq method.
func arrowLabel(m *Message) string {
	label := fmt.Sprintf("#%d %s", m.Index, m.Method)
	if !m.Request {
		label = fmt.Sprintf("#%d %d", m.Index, m.StatusCode)
		if t := StatusText(m.StatusCode); t != "" {
			label += " " + t
		}
		label += " (" + m.Method + ")"
	}
	if m.Retransmission {
		label += " (rtx)"
	}
	return label
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

// StartLine is m's first line as the sender wrote it (sender text).
func (m *Message) StartLine() string {
	for i, c := range m.Raw {
		if c == '\r' || c == '\n' {
			return string(m.Raw[:i])
		}
	}
	return string(m.Raw)
}
