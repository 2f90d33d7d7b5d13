package dbc

import (
	"errors"
	"fmt"
	"strings"
)

// Error is why a file was refused: the file, the 1-based line (0 when the
// reason is about the whole file) and a reason a person can act on.
type Error struct {
	File   string
	Line   int
	Reason string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Reason)
}

func errorf(file string, line int, format string, a ...any) *Error {
	return &Error{File: file, Line: line, Reason: fmt.Sprintf(format, a...)}
}

// cleanReason keeps a third-party reason printable and short: it may quote
// bytes from the file.
func cleanReason(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= maxReasonBytes {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7F || (r >= 0x80 && r < 0xA0) {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ErrNoMessage is wrapped when a message name or id is not in a database.
var ErrNoMessage = errors.New("dbc: no such message")
