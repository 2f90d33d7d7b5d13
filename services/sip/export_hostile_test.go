package sip_test

// export_capture against a hostile or failing disk: unique names, nothing
// left behind on any failure, a full disk said so, and an export
// directory that is never followed through a symlink.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"

	"fieldtap/board/sim/sipgen"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
	"fieldtap/tools/tmpfs"
)

// loadedBox is a box holding generated calls, and their dialogs.
func loadedBox(t *testing.T, dir string, calls int) (*box, *sip.Snapshot, []*sip.Dialog) {
	t.Helper()
	b := newBox(t, dir)
	o := sipgen.Options{Seed: 5, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Duration: time.Duration(max(30, 3*calls)) * time.Second, Calls: calls}
	if err := sipgen.Generate(o, func(p sipgen.Packet) error {
		b.feed(t, p.Time, wire.LinkEthernet, p.Data)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sn := b.store.Snapshot()
	if len(sn.Dialogs) == 0 {
		t.Fatal("no dialogs generated")
	}
	return b, sn, sn.Dialogs
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestExportNamesAreUnique: two exporters (two daemons, or one restarted)
// exporting in the same second write two files, created 0700 in a
// directory the exporter made.
func TestExportNamesAreUnique(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exports")
	b, sn, ds := loadedBox(t, dir, 2)
	other := sip.NewExporter(dir, netdecode.Options{})
	other.AddPort(testPort, b.fs)
	at := time.Unix(1_800_000_000, 0)
	first, err := b.ex.Export(context.Background(), sn, ds, nil, at)
	if err != nil {
		t.Fatal(err)
	}
	second, err := other.Export(context.Background(), sn, ds, nil, at)
	if err != nil {
		t.Fatal(err)
	}
	if first.Path == second.Path || len(entries(t, dir)) != 2 {
		t.Errorf("two exports in one second: %s and %s, directory %v", first.Path, second.Path, entries(t, dir))
	}
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("export directory mode %v, %v: want 0700", st.Mode().Perm(), err)
	}
}

// TestExportOnAFullDiskLeavesNothing fills a real tmpfs: the export
// fails naming the full disk, and the directory holds no partial file.
func TestExportOnAFullDiskLeavesNothing(t *testing.T) {
	mnt := tmpfs.Mount(t, 256<<10)
	dir := filepath.Join(mnt, "exports")
	b, sn, ds := loadedBox(t, dir, 20)
	if err := b.ex.Prepare(); err != nil {
		t.Fatal(err)
	}
	filler := tmpfs.Fill(t, mnt, "filler")
	// Leave room for the file's first blocks, not for the whole of it.
	st, _ := os.Stat(filler)
	if err := os.Truncate(filler, st.Size()-16<<10); err != nil {
		t.Fatal(err)
	}
	_, err := b.ex.Export(context.Background(), sn, ds, nil, time.Now())
	if !errors.Is(err, sip.ErrDiskFull) || !strings.Contains(err.Error(), "nothing was kept") {
		t.Fatalf("export on a full disk: %v, want ErrDiskFull saying nothing was kept", err)
	}
	if left := entries(t, dir); len(left) != 0 {
		t.Errorf("a failed export left %v", left)
	}
	os.Remove(filler)
	if res, err := b.ex.Export(context.Background(), sn, ds, nil, time.Now()); err != nil || res.Frames == 0 {
		t.Errorf("export after freeing space: %+v, %v", res, err)
	}
}

// TestExportDirectoryIsNeverFollowed: a symlink planted where the export
// directory goes, a directory others may write, or one another user owns
// is refused, and nothing is written through it.
func TestExportDirectoryIsNeverFollowed(t *testing.T) {
	cases := []struct {
		name  string
		plant func(t *testing.T, dir, target string)
		want  string
	}{
		{name: "symlink", want: "symlink", plant: func(t *testing.T, dir, target string) {
			if err := os.Symlink(target, dir); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "writable by others", want: "writable by others", plant: func(t *testing.T, dir, _ string) {
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir, 0o777) // Mkdir's mode passes the umask
		}},
		{name: "another owner", want: "belongs to uid", plant: func(t *testing.T, dir, _ string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a directory away")
			}
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			target := filepath.Join(root, "attacker")
			if err := os.Mkdir(target, 0o777); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "fieldtap-export")
			tc.plant(t, dir, target)
			b, sn, ds := loadedBox(t, dir, 1)
			if err := b.ex.Prepare(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Prepare = %v, want a refusal naming %q", err, tc.want)
			}
			if _, err := b.ex.Export(context.Background(), sn, ds, nil, time.Now()); err == nil {
				t.Error("an export went through a planted directory")
			}
			if left := entries(t, target); len(left) != 0 {
				t.Errorf("the planted directory received %v", left)
			}
		})
	}
}

// TestReadExportKeepsItsBound: a file read back (export_vcon's pcapng
// attachment) is returned whole up to max bytes, refused past them, and
// never read from outside the export directory.
func TestReadExportKeepsItsBound(t *testing.T) {
	dir := t.TempDir()
	ex := sip.NewExporter(dir, netdecode.Options{})
	path, err := ex.WriteFile(time.Now(), "bound", "bin", make([]byte, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if data, ok, err := ex.ReadExport(path, 1000); err != nil || !ok || len(data) != 1000 {
		t.Errorf("at the bound: %d bytes, ok %v, err %v", len(data), ok, err)
	}
	if data, ok, err := ex.ReadExport(path, 999); err != nil || ok || data != nil {
		t.Errorf("past the bound: %d bytes, ok %v, err %v", len(data), ok, err)
	}
	outside := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ex.ReadExport(outside, 1000); err == nil {
		t.Error("read a file outside the export directory")
	}
}
