//go:build !linux

package tmpfs

import "testing"

// Mount skips: a tmpfs mount needs Linux.
func Mount(t testing.TB, size int) string {
	t.Helper()
	t.Skip("a tmpfs to fill needs Linux")
	return ""
}

// Fill is never reached: Mount skipped the test.
func Fill(t testing.TB, dir, name string) string {
	t.Helper()
	t.Skip("a tmpfs to fill needs Linux")
	return ""
}
