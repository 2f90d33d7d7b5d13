package board

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// pressFileMax bounds what a press-file read takes in: a press is one
// short line.
const pressFileMax = 256

// FileButton is the sim board's confirm button: a file whose content
// changing is a press. PressFile (the `fieldtap button press` command)
// writes a fresh line each time; a wait remembers the content it started
// with, so a press made before the wait confirms nothing.
type FileButton struct{ Path string }

// AwaitPress polls the file every ButtonPoll until its content differs
// from what it held when the wait began, or ctx ends, calling armed (when
// not nil) once that content is read. An absent or unreadable file is not
// a press.
func (f *FileButton) AwaitPress(ctx context.Context, armed func()) (time.Time, error) {
	before := readPress(f.Path)
	if armed != nil {
		armed()
	}
	t := time.NewTicker(ButtonPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-t.C:
		}
		if now := readPress(f.Path); now != nil && !bytes.Equal(now, before) {
			return time.Now(), nil
		}
	}
}

func readPress(path string) []byte {
	fh, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer fh.Close()
	b := make([]byte, pressFileMax)
	n, _ := fh.Read(b)
	if n == 0 {
		return nil
	}
	return b[:n]
}

// PressFile presses the sim board's confirm button: it replaces the file
// at path with a line no earlier press wrote (the time and this process),
// by rename, so a poll never reads half of it.
func PressFile(path string) error {
	line := fmt.Sprintf("press %s pid %d\n", strconv.FormatInt(time.Now().UnixNano(), 10), os.Getpid())
	tmp, err := os.CreateTemp(filepath.Dir(path), ".press-*")
	if err != nil {
		return fmt.Errorf("press %s: %w", path, err)
	}
	_, werr := tmp.WriteString(line)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		// The daemon's user reads it; a press is no secret.
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("press %s: %w", path, werr)
	}
	return nil
}
