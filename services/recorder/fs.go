package recorder

import (
	"errors"
	"os"
)

// File modes: segments hold whatever the ports carried, so only the
// daemon's user (and its group, for an operator's tools) reads them.
const (
	fileMode = 0o640
	dirMode  = 0o750
)

// ErrInUse is returned by Open when another process records into the
// directory.
var ErrInUse = errors.New("recorder: directory in use")

// syncDir makes a directory's entries (a new, renamed or removed file)
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
