//go:build unix

package sip

import (
	"fmt"
	"os"
	"syscall"
)

// ownedByUs refuses a directory another user owns: they could swap its
// files under the box.
func ownedByUs(dir string, st os.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("export directory %s: no owner to check", dir)
	}
	if uid := os.Geteuid(); int(sys.Uid) != uid {
		return fmt.Errorf("export directory %s belongs to uid %d, not this process's %d: remove it, or set store.export_dir", dir, sys.Uid, uid)
	}
	return nil
}
