package tlsdecrypt

import (
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// KeyFileSuffixes are the names a key log placed in the data directory
// ends with.
var KeyFileSuffixes = []string{".keys", ".keylog"}

// reloadEvery bounds how often a lookup that misses rereads the files:
// a PBX writes a session's keys during its handshake, so the first miss
// after it rereads, and a flood of unknown sessions costs one read a second.
const reloadEvery = time.Second

// KeyFiles keeps a Keys store filled from key log files: those
// configured, and those in a directory whose names end in a
// KeyFileSuffixes suffix. A file is read again when its size or time
// changes.
type KeyFiles struct {
	keys  *Keys
	paths []string
	dir   string
	// report hears each file that could not be read or parsed, once
	// until its error changes; the error names the file and line, never
	// a secret.
	report func(path string, err error)

	mu       sync.Mutex
	seen     map[string]fileStamp
	reported map[string]string
	last     time.Time
	now      func() time.Time
}

type fileStamp struct {
	size int64
	mod  time.Time
}

// NewKeyFiles returns a loader of paths and of dir's key logs into keys
// (dir may be empty). report may be nil.
func NewKeyFiles(keys *Keys, paths []string, dir string, report func(path string, err error)) *KeyFiles {
	if report == nil {
		report = func(string, error) {}
	}
	return &KeyFiles{keys: keys, paths: paths, dir: dir, report: report, seen: map[string]fileStamp{}, reported: map[string]string{}, now: time.Now}
}

// Load reads every file that changed since it was last read and returns
// how many it read. Configured files that are missing are reported;
// the directory's are looked for.
func (f *KeyFiles) Load() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = f.now()
	read := 0
	for _, p := range f.files() {
		fi, err := os.Stat(p)
		if err != nil {
			f.fault(p, err)
			continue
		}
		st := fileStamp{size: fi.Size(), mod: fi.ModTime()}
		if old, ok := f.seen[p]; ok && old == st {
			continue
		}
		f.seen[p] = st
		data, err := ReadKeyLogFile(p)
		if err != nil {
			f.fault(p, err)
			continue
		}
		if err := f.keys.Add(data); err != nil {
			f.fault(p, err)
		} else {
			delete(f.reported, p)
		}
		read++
	}
	return read
}

// fault reports err for path unless it was the last reported for it.
func (f *KeyFiles) fault(path string, err error) {
	if f.reported[path] == err.Error() {
		return
	}
	f.reported[path] = err.Error()
	f.report(path, err)
}

// Reload is Load at most once every reloadEvery: Keys' miss hook.
func (f *KeyFiles) Reload() {
	f.mu.Lock()
	due := f.now().Sub(f.last) >= reloadEvery
	f.mu.Unlock()
	if due {
		f.Load()
	}
}

// files lists the configured paths and the directory's key logs.
func (f *KeyFiles) files() []string {
	out := slices.Clone(f.paths)
	if f.dir == "" {
		return out
	}
	ents, err := os.ReadDir(f.dir)
	if err != nil {
		return out // no data directory yet: nothing placed there
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		for _, suf := range KeyFileSuffixes {
			if filepath.Ext(e.Name()) == suf {
				out = append(out, filepath.Join(f.dir, e.Name()))
			}
		}
	}
	return out
}
