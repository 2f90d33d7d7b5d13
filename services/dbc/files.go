package dbc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Bounds of Files: a data directory is the operator's, but it may hold
// anything, so the walk and the list stop and say so.
const (
	// MaxListedFiles bounds the DBC files Files lists.
	MaxListedFiles = 256
	// MaxWalked bounds the directory entries Files looks at.
	MaxWalked = 20000
)

// FileInfo is one DBC file of the data directory. Loaded lists the
// databases read from it, by name, in first-load order.
type FileInfo struct {
	Path     string // relative to the data directory, '/'-separated
	Size     int64
	Modified time.Time
	Loaded   []*Database
}

// FileList is what Files found.
type FileList struct {
	Files []FileInfo // by path
	// More counts DBC files past MaxListedFiles; Unwalked is true when the
	// walk stopped at its bound, so more may exist.
	More     int
	Unwalked bool
	// Unreadable counts directories the walk could not read.
	Unreadable int
}

// Files lists the *.dbc files (any case) under the data directory, a
// directory's symlinks neither followed nor listed (dbc_load refuses
// them), with the databases loaded from each.
func (r *Registry) Files() (FileList, error) {
	if r.dir == "" {
		return FileList{}, ErrNoDataDir
	}
	var out FileList
	walked := 0
	err := filepath.WalkDir(r.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == r.dir {
				return err
			}
			out.Unreadable++
			return fs.SkipDir
		}
		if walked++; walked > MaxWalked {
			out.Unwalked = true
			return fs.SkipAll
		}
		if !d.Type().IsRegular() || !strings.EqualFold(filepath.Ext(path), ".dbc") {
			return nil
		}
		if len(out.Files) == MaxListedFiles {
			out.More++
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed while walking
		}
		rel, _ := filepath.Rel(r.dir, path)
		out.Files = append(out.Files, FileInfo{Path: filepath.ToSlash(rel), Size: info.Size(), Modified: info.ModTime().UTC()})
		return nil
	})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return FileList{}, errors.Join(ErrNoDataDir, err)
		}
		return FileList{}, err
	}
	for _, db := range r.List() {
		if i := slices.IndexFunc(out.Files, func(f FileInfo) bool { return f.Path == filepath.ToSlash(filepath.Clean(db.File)) }); i >= 0 {
			out.Files[i].Loaded = append(out.Files[i].Loaded, db)
		}
	}
	return out, nil
}
