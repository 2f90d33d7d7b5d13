//go:build linux

package tmpfs

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Mount mounts a tmpfs of size bytes (rounded up to pages by the kernel)
// on a new directory and unmounts it when the test ends.
func Mount(t testing.TB, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (needs CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a file named name in dir until the file system is full and
// returns its path; removing it frees the space again.
func Fill(t testing.TB, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	// A last byte at a time, for the space a page-sized write left.
	for {
		if _, err := f.Write(buf[:1]); err != nil {
			return p
		}
	}
}
