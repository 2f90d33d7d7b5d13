package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// readChunk is what one read of a text capture asks for: a 64 KiB read(2)
// is over a thousand candump lines.
const readChunk = 64 << 10

// maxEmptyReads is how many reads in a row may return nothing before
// ReadLines gives up on r, as bufio does.
const maxEmptyReads = 100

// ReadLines splits a text capture (a candump or J1708 log) into lines of
// at most maxLine bytes, calling fn with each line's 1-based number and
// its bytes without the newline (borrowed: valid only during the call). A
// line longer than maxLine is not read into memory: fn gets it with
// overlong set and no bytes, and reading goes on at the next line, so one
// bad line never ends the file. ReadLines returns fn's first error, or a
// read error naming the line; nil at the end of r.
//
// It reads r a chunk at a time into one buffer and hands lines out of it
// in place: one newline search a line and no per-line call into bufio.
func ReadLines(r io.Reader, maxLine int, fn func(n int, line []byte, overlong bool) error) error {
	// Room behind a kept partial line (at most maxLine) for a read at
	// least as large.
	buf := make([]byte, max(readChunk, 2*(maxLine+1)))
	start, end := 0, 0 // buf[start:end] is read and not yet handed out
	n := 1
	skip := false // the line being read is overlong: drop it up to its newline
	empty := 0
	var rerr error
	for {
		for {
			i := bytes.IndexByte(buf[start:end], '\n')
			if i < 0 {
				break
			}
			line := buf[start : start+i : start+i]
			start += i + 1
			if err := deliver(fn, n, line, skip || len(line) > maxLine); err != nil {
				return err
			}
			skip = false
			n++
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				return fmt.Errorf("line %d: %w", n, rerr)
			}
			return deliver(fn, n, buf[start:end:end], skip || end-start > maxLine)
		}
		if end-start > maxLine {
			skip, start = true, end
		}
		// The start of the next line moves to the front; it is at most
		// maxLine, so there is room behind it.
		end = copy(buf, buf[start:end])
		start = 0
		var m int
		m, rerr = r.Read(buf[end:])
		end += m
		if m > 0 || rerr != nil {
			empty = 0
		} else if empty++; empty == maxEmptyReads {
			rerr = io.ErrNoProgress
		}
	}
}

// deliver hands fn a line unless it is empty; an overlong one goes with
// no bytes.
func deliver(fn func(n int, line []byte, overlong bool) error, n int, line []byte, overlong bool) error {
	switch {
	case overlong:
		return fn(n, nil, true)
	case len(line) > 0:
		return fn(n, line, false)
	}
	return nil
}
