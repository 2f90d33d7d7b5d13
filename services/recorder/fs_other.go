//go:build !linux

package recorder

import (
	"errors"
	"os"
)

// fdatasync falls back to a full fsync where fdatasync is not available.
var fdatasync = func(f *os.File) error { return f.Sync() }

// lockDir holds the lock file open; other systems get no exclusion.
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
}

func freeBytes(dir string) (int64, error) {
	return 0, errors.New("free space is known on Linux only")
}
