package sip

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Export directory modes: the directory is the daemon's own (the files
// in it are captured traffic); parents it has to make are ordinary.
const (
	exportDirMode    = 0o700
	exportParentMode = 0o755
	// exportDirShared are the permission bits that would let another
	// user plant or swap files in an existing directory.
	exportDirShared = 0o022
)

// openExportDir opens dir as a root, creating it 0700 if it is missing.
// An existing one must be a directory itself, not a symlink (the default
// lives under a shared TMPDIR where anyone may plant one), owned by this
// process's user and writable by no one else; the directory opened is
// checked to be the one looked at, so a swap in between is refused too.
func openExportDir(dir string) (*os.Root, error) {
	if err := os.MkdirAll(filepath.Dir(dir), exportParentMode); err != nil {
		return nil, fmt.Errorf("export directory %s: %w", dir, err)
	}
	if err := os.Mkdir(dir, exportDirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("export directory %s: %w", dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("export directory %s: %w", dir, err)
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("export directory %s is a symlink; fieldtap never follows one there (remove it, or set store.export_dir)", dir)
	case !st.IsDir():
		return nil, fmt.Errorf("export directory %s is not a directory", dir)
	case st.Mode().Perm()&exportDirShared != 0:
		return nil, fmt.Errorf("export directory %s is writable by others (mode %v): chmod go-w it, or set store.export_dir", dir, st.Mode().Perm())
	}
	if err := ownedByUs(dir, st); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("export directory %s: %w", dir, err)
	}
	opened, err := root.Stat(".")
	if err != nil || !os.SameFile(st, opened) {
		root.Close()
		return nil, fmt.Errorf("export directory %s changed while it was opened", dir)
	}
	return root, nil
}
