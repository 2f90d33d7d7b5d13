package dbc

import (
	"cmp"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"fieldtap/drivers/wire"
)

// Bounds of Absence's answer: it names a few ids of each side and counts
// the rest.
const (
	// MaxCountedIDs bounds the distinct bus ids Absence counts: 2048
	// 11-bit ids and a truck's few hundred 29-bit ones fit; past it the
	// count says "at least".
	MaxCountedIDs = 4096
	// absenceListed is how many ids of each side Absence names.
	absenceListed = 12
)

// Absence says, for a window in which no frame matched msgs (all of the
// database's messages when msgs is empty), which ids those messages have
// and which ids the window's frames carried, most frequent first; "" when
// the window held no frame at all (the caller says that its own way).
// It is the hint an answer of zero rows owes its reader: the wrong file,
// the wrong bus, or the wrong window.
func (db *Database) Absence(msgs []*Message, frames iter.Seq[Frame]) string {
	if len(msgs) == 0 {
		for i := range db.Messages {
			msgs = append(msgs, &db.Messages[i])
		}
	}
	counts := map[uint32]int{}
	seen, over := 0, false
	for f := range frames {
		seen++
		if _, ok := counts[f.ID]; ok || len(counts) < MaxCountedIDs {
			counts[f.ID]++
		} else {
			over = true
		}
	}
	if seen == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no frame of the window carries an id of %s: %s %d id(s) (", db.Name, plural(len(msgs), "the message has", "its messages have"), len(msgs))
	for i, m := range msgs[:min(len(msgs), absenceListed)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.IDHex())
	}
	if len(msgs) > absenceListed {
		fmt.Fprintf(&b, ", … %d more", len(msgs)-absenceListed)
	}
	if slices.ContainsFunc(msgs, func(m *Message) bool { return m.J1939 }) {
		b.WriteString("; J1939 ones also match their PGN from any source")
	}
	ids := slices.SortedFunc(maps.Keys(counts), func(a, c uint32) int {
		return cmp.Or(cmp.Compare(counts[c], counts[a]), cmp.Compare(a, c))
	})
	atLeast := ""
	if over {
		atLeast = "at least "
	}
	fmt.Fprintf(&b, "); the window's %d frames carry %s%d distinct id(s), most frequent: ", seen, atLeast, len(ids))
	for i, id := range ids[:min(len(ids), absenceListed)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s ×%d", wire.FormatCANID(id), counts[id])
	}
	b.WriteString(". Check the file, the port and the window")
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
