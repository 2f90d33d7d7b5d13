package tmpfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFillThenFree(t *testing.T) {
	dir := Mount(t, 64<<10)
	filler := Fill(t, dir, "filler")
	err := os.WriteFile(filepath.Join(dir, "more"), []byte("x"), 0o600)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("write on a full tmpfs: %v, want ENOSPC", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "more"), []byte("x"), 0o600); err != nil {
		t.Errorf("write after freeing: %v", err)
	}
}
