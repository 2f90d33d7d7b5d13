package dbc

import (
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
	ErrBadName      = errors.New("dbc: name must be 1-64 letters, digits, '_', '-' or '.'")
	ErrNotRegular   = errors.New("dbc: not a regular file")
	ErrNoDataDir    = errors.New("dbc: no data directory configured")
	ErrNotLoaded    = errors.New("dbc: no database by that name")
	errFileTooLarge = errors.New("dbc: file too large")
)

// Registry holds the named databases an operator loaded from one data
// directory. Files are opened through os.Root, so neither `..` nor a
// symlink can reach outside the directory.
type Registry struct {
	dir   string
	now   func() time.Time
	mu    sync.Mutex
	dbs   map[string]*Database
	order []string
	// onLoad hears of every successful Load (Watch).
	onLoad func(loaded []*Database)
}

// NewRegistry returns a registry reading from dir; an empty dir refuses
// every load with ErrNoDataDir.
func NewRegistry(dir string) *Registry {
	return &Registry{dir: dir, now: time.Now, dbs: map[string]*Database{}}
}

// Dir is the data directory.
func (r *Registry) Dir() string { return r.dir }

// Load reads file from the data directory and keeps it as name (the file's
// base name without .dbc when name is empty). Loading an existing name
// replaces it; a new name beyond MaxDatabases is refused.
func (r *Registry) Load(name, file string) (*Database, error) {
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if !validName(name) {
		return nil, fmt.Errorf("%w: %q", ErrBadName, name)
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
	if _, exists := r.dbs[name]; !exists {
		if len(r.dbs) >= MaxDatabases {
			return nil, fmt.Errorf("%w (%d): reuse a loaded name to replace it", ErrTooMany, MaxDatabases)
		}
		r.order = append(r.order, name)
	}
	r.dbs[name] = db
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

// read returns the file's bytes, refusing paths that leave the directory,
// anything but a regular file, and more than MaxFileBytes.
func (r *Registry) read(file string) ([]byte, error) {
	if r.dir == "" {
		return nil, ErrNoDataDir
	}
	if !filepath.IsLocal(file) || strings.ContainsRune(file, '\\') {
		return nil, fmt.Errorf("%w: %q", ErrUnsafePath, file)
	}
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return nil, fmt.Errorf("dbc: data directory: %w", err)
	}
	defer root.Close()
	f, err := root.Open(file)
	if err != nil {
		return nil, fmt.Errorf("dbc: %w", err) // os.Root names an escaping symlink
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("dbc: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s", ErrNotRegular, file)
	}
	if st.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, over %d", errFileTooLarge, file, st.Size(), MaxFileBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("dbc: read %s: %w", file, err)
	}
	return data, nil // Parse refuses a file that grew past the limit
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
