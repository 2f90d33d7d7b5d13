package dbc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// MaxDatabases bounds the loaded databases: each can hold MaxSignals
// signals, and an agent loading files in a loop must not fill the box.
const MaxDatabases = 8

// MaxNameBytes bounds a database name; it is a label, not a path.
const MaxNameBytes = 64

// Errors a Registry returns; Load wraps them with the name or file.
var (
	ErrUnsafePath   = errors.New("dbc: file must be a plain relative name inside the data directory")
	ErrTooMany      = errors.New("dbc: too many databases loaded")
	ErrTooBig       = errors.New("dbc: the loaded databases would hold too much memory")
	ErrBadName      = errors.New("dbc: name must be 1-64 letters, digits, '_', '-' or '.'")
	ErrNotRegular   = errors.New("dbc: not a regular file")
	ErrNoDataDir    = errors.New("dbc: no data directory configured")
	ErrNotLoaded    = errors.New("dbc: no database by that name")
	errFileTooLarge = errors.New("dbc: file too large")
	errFileChanged  = errors.New("dbc: the file changed while it was opened")
)

// Registry holds the named databases an operator loaded from one data
// directory. Files are opened through os.Root, so neither `..` nor a
// symlink can reach outside the directory.
//
// A load is checked before anything is parsed: the name, the path, that
// the registry has room (MaxDatabases), that the file is a regular file
// (a FIFO or a device is refused without blocking) of at most
// MaxFileBytes. Loads run one at a time (parsing a large file allocates
// several times its size for a moment); a load waits for the one before
// it for as long as its context allows. The parsed database must hold at
// most MaxDatabaseBytes, and all of them together MaxRegistryBytes.
type Registry struct {
	dir     string
	now     func() time.Time
	loading chan struct{} // one slot: the load in progress

	mu    sync.Mutex
	dbs   map[string]*Database
	order []string
	bytes int64 // Bytes of every loaded database
	// onLoad hears of every successful Load (Watch).
	onLoad func(loaded []*Database)
}

// NewRegistry returns a registry reading from dir; an empty dir refuses
// every load with ErrNoDataDir.
func NewRegistry(dir string) *Registry {
	return &Registry{dir: dir, now: time.Now, dbs: map[string]*Database{}, loading: make(chan struct{}, 1)}
}

// Dir is the data directory.
func (r *Registry) Dir() string { return r.dir }

// Load reads file from the data directory and keeps it as name (the file's
// base name without .dbc when name is empty). Loading an existing name
// replaces it; a new name beyond MaxDatabases is refused. It returns
// ctx's error if ctx ends while it waits for another load.
func (r *Registry) Load(ctx context.Context, name, file string) (*Database, error) {
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if !validName(name) {
		return nil, fmt.Errorf("%w: %q", ErrBadName, name)
	}
	if r.dir == "" {
		return nil, ErrNoDataDir
	}
	if !filepath.IsLocal(file) || strings.ContainsRune(file, '\\') {
		return nil, fmt.Errorf("%w: %q", ErrUnsafePath, file)
	}
	select {
	case r.loading <- struct{}{}:
		defer func() { <-r.loading }()
	case <-ctx.Done():
		return nil, fmt.Errorf("dbc: waiting for another load: %w", ctx.Err())
	}
	if err := r.room(name, 0); err != nil {
		return nil, err
	}
	data, err := r.read(file)
	if err != nil {
		return nil, err
	}
	db, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	db.Name, db.LoadedAt = name, r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.roomLocked(name, db.Bytes); err != nil {
		return nil, err
	}
	if old, exists := r.dbs[name]; exists {
		r.bytes -= old.Bytes
	} else {
		r.order = append(r.order, name)
	}
	r.dbs[name] = db
	r.bytes += db.Bytes
	if fn := r.onLoad; fn != nil {
		all := make([]*Database, 0, len(r.order))
		for _, n := range r.order {
			all = append(all, r.dbs[n])
		}
		// Called under r.mu so watchers see loads in order; fn must not
		// call back into the registry.
		fn(all)
	}
	return db, nil
}

// Watch calls fn after every successful Load with the loaded databases
// in first-load order, so what is built from them (the J1939 SPN
// catalogue) follows the operator's files. fn must not call the registry.
func (r *Registry) Watch(fn func(loaded []*Database)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onLoad = fn
}

// room reports whether a database of size bytes may be kept as name.
func (r *Registry) room(name string, size int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.roomLocked(name, size)
}

func (r *Registry) roomLocked(name string, size int64) error {
	old, exists := r.dbs[name]
	if !exists && len(r.dbs) >= MaxDatabases {
		return fmt.Errorf("%w (%d): reuse a loaded name to replace it", ErrTooMany, MaxDatabases)
	}
	total := r.bytes + size
	if exists {
		total -= old.Bytes
	}
	if total > MaxRegistryBytes {
		return fmt.Errorf("%w: %s needs about %d MiB and the others hold %d MiB, over %d MiB: load it under the name of a database you no longer need", ErrTooBig, name, size>>20, (total-size)>>20, MaxRegistryBytes>>20)
	}
	return nil
}

// read returns the file's bytes, refusing anything but a regular file of
// at most MaxFileBytes. The file is looked at before it is opened and
// opened non-blocking, so a FIFO (whose open would wait for a writer) or
// a device is refused at once; what was opened is checked to be what was
// looked at.
func (r *Registry) read(file string) ([]byte, error) {
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return nil, fmt.Errorf("dbc: data directory: %w", err)
	}
	defer root.Close()
	st, err := root.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("dbc: %w", err) // os.Root names an escaping symlink
	}
	if err := regularAndSmall(file, st); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(file, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, fmt.Errorf("dbc: %w", err)
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("dbc: %w", err)
	}
	if !os.SameFile(st, opened) {
		return nil, fmt.Errorf("%w: %s", errFileChanged, file)
	}
	if err := regularAndSmall(file, opened); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("dbc: read %s: %w", file, err)
	}
	return data, nil // Parse refuses a file that grew past the limit
}

func regularAndSmall(file string, st os.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is a %s", ErrNotRegular, file, fileKind(st.Mode()))
	}
	if st.Size() > MaxFileBytes {
		return fmt.Errorf("%w: %s is %d bytes, over %d", errFileTooLarge, file, st.Size(), MaxFileBytes)
	}
	return nil
}

// fileKind names what a non-regular file is, for the refusal.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

func validName(s string) bool {
	if s == "" || len(s) > MaxNameBytes {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// Get returns the named database.
func (r *Registry) Get(name string) (*Database, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	db := r.dbs[name]
	if db == nil {
		return nil, fmt.Errorf("%w: %q", ErrNotLoaded, name)
	}
	return db, nil
}

// List returns the loaded databases in first-load order.
func (r *Registry) List() []*Database {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Database, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.dbs[n])
	}
	return out
}
