package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// ReadLines splits a text capture (a candump or J1708 log) into lines of
// at most maxLine bytes, calling fn with each line's 1-based number and
// its bytes without the newline (borrowed: valid only during the call). A
// line longer than maxLine is not read into memory: fn gets it with
// overlong set and no bytes, and reading goes on at the next line, so one
// bad line never ends the file. ReadLines returns fn's first error, or a
// read error naming the line; nil at the end of r.
func ReadLines(r io.Reader, maxLine int, fn func(n int, line []byte, overlong bool) error) error {
	br := bufio.NewReaderSize(r, maxLine+1) // room for the newline of a line of maxLine
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		overlong := false
		if errors.Is(err, bufio.ErrBufferFull) {
			overlong = true
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			line = nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			line = line[:len(line)-1]
		}
		if len(line) > maxLine { // bufio's smallest buffer is 16 bytes
			overlong, line = true, nil
		}
		if len(line) > 0 || overlong {
			if ferr := fn(n, line, overlong); ferr != nil {
				return ferr
			}
		}
		if err != nil { // io.EOF
			return nil
		}
	}
}
