package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// auditTail is how much of a file's end is read at open to find its last
// whole record: several times the largest record (maxAuditArgs plus the
// other fields, escaped).
const auditTail = 64 << 10

// errAuditClosed is what a record made after Close gets.
var errAuditClosed = errors.New("the audit file is closed")

// auditFile is the append-only file of one Log: each record is one
// write of one whole line; a write that comes up short is cut back, so a
// reader finds every record whole or not at all; past maxBytes the file
// is renamed to PATH.1 (replacing the one before) and a new one started.
// Its methods are called under Log.mu.
type auditFile struct {
	path     string
	maxBytes int64
	f        *os.File
	size     int64
	// torn: a short write could not be cut back, so the next record
	// starts with a newline to stand on a line of its own.
	torn bool
}

// openAuditFile opens (creating 0600) path for appending. A torn last
// record (a crash mid-write, before this version cut them back) is cut
// off; the last whole record's seq is returned so numbering carries on,
// from PATH.1 when the file itself is empty.
func openAuditFile(path string, maxBytes int64) (*auditFile, uint64, int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, auditFileMode)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("mcp audit file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, 0, fmt.Errorf("mcp audit file: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, 0, fmt.Errorf("mcp audit file %s: not a regular file", path)
	}
	a := &auditFile{path: path, maxBytes: maxBytes, f: f, size: st.Size()}
	seq, whole, err := lastRecord(f, a.size)
	if err != nil {
		f.Close()
		return nil, 0, 0, fmt.Errorf("mcp audit file %s: %w", path, err)
	}
	cut := a.size - whole
	if cut > 0 {
		if err := f.Truncate(whole); err != nil {
			f.Close()
			return nil, 0, 0, fmt.Errorf("mcp audit file %s: cut a torn last record: %w", path, err)
		}
		a.size = whole
	}
	if seq == 0 {
		if prev, err := os.Open(path + ".1"); err == nil {
			if pst, err := prev.Stat(); err == nil {
				seq, _, _ = lastRecord(prev, pst.Size())
			}
			prev.Close()
		}
	}
	return a, seq, cut, nil
}

// lastRecord finds the end of the last whole line of f (size bytes) and
// the seq of the record on it (0 if none parses).
func lastRecord(f *os.File, size int64) (seq uint64, whole int64, err error) {
	from := max(size-auditTail, 0)
	buf := make([]byte, size-from)
	if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, err
	}
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		if from > 0 { // no newline in the tail: keep what is there rather than cut blind
			return 0, size, nil
		}
		return 0, 0, nil
	}
	whole = from + int64(end) + 1
	line := buf[:end]
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	var r struct {
		Seq uint64 `json:"seq"`
	}
	_ = json.Unmarshal(line, &r) // a line that does not parse numbers nothing
	return r.Seq, whole, nil
}

// write appends line whole, rotating first when it would pass maxBytes.
// It returns an error when the record is not in the file: nothing of it
// is then left behind, unless cutting a short write back also failed
// (torn, and the next record starts on a new line).
func (a *auditFile) write(line []byte) error {
	if a.f == nil {
		return errAuditClosed
	}
	if a.size > 0 && a.size+int64(len(line)) > a.maxBytes {
		if err := a.rotate(); err != nil {
			return err
		}
	}
	if a.torn {
		line = append([]byte{'\n'}, line...)
	}
	n, err := a.f.Write(line)
	if err == nil && n == len(line) {
		a.size += int64(n)
		a.torn = false
		return nil
	}
	if err == nil {
		err = io.ErrShortWrite
	}
	if n > 0 {
		if terr := a.f.Truncate(a.size); terr != nil {
			a.size += int64(n)
			a.torn = true
			return fmt.Errorf("audit record: %w (and cutting its %d written bytes back failed: %v)", err, n, terr)
		}
	}
	return fmt.Errorf("audit record: %w", err)
}

// rotate renames the file to PATH.1 and starts an empty one. If the new
// file cannot be made the old one stays open and the record is lost.
func (a *auditFile) rotate() error {
	if err := os.Rename(a.path, a.path+".1"); err != nil {
		return fmt.Errorf("audit rotate: %w", err)
	}
	f, err := os.OpenFile(a.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, auditFileMode)
	if err != nil {
		return fmt.Errorf("audit rotate: %w", err)
	}
	a.f.Close()
	a.f, a.size, a.torn = f, 0, false
	return nil
}

func (a *auditFile) close() error {
	if a.f == nil {
		return errAuditClosed
	}
	err := a.f.Close()
	a.f = nil
	return err
}
