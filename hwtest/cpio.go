package hwtest

import (
	"fmt"
	"io"
	"sort"
)

// File is one initramfs entry. Mode carries the type bits (0o100000 file,
// 0o40000 directory, 0o120000 symlink, whose Data is the target).
type File struct {
	Mode uint32
	Data []byte
}

// Entry type bits of a newc cpio header (see man 5 cpio).
const (
	ModeFile    = 0o100000
	ModeDir     = 0o040000
	ModeSymlink = 0o120000
)

// WriteCPIO writes files as a newc ("070701") archive, the format the
// kernel unpacks into rootfs. Parents are listed before children.
func WriteCPIO(w io.Writer, files map[string]File) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names) // "a" sorts before "a/b": parents first
	ino := 1
	for _, n := range names {
		if err := writeEntry(w, n, files[n], ino); err != nil {
			return err
		}
		ino++
	}
	return writeEntry(w, "TRAILER!!!", File{}, 0)
}

func writeEntry(w io.Writer, name string, f File, ino int) error {
	nlink := 1
	if f.Mode&ModeDir == ModeDir && f.Mode&ModeFile == 0 {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, f.Mode, 0, 0, nlink, 0, len(f.Data), 0, 0, 0, 0, len(name)+1, 0)
	if _, err := io.WriteString(w, hdr+name+"\x00"+pad(len(hdr)+len(name)+1)); err != nil {
		return err
	}
	if _, err := w.Write(f.Data); err != nil {
		return err
	}
	_, err := io.WriteString(w, pad(len(f.Data)))
	return err
}

// pad returns the NULs that bring n up to newc's 4-byte alignment.
func pad(n int) string { return "\x00\x00\x00"[:(4-n%4)%4] }
