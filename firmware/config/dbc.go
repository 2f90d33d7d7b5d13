package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// DBC names the DBC files loaded at start-up (services/dbc), as dbc_load
// would load them: most operators decode with the same files every time.
type DBC struct {
	// Preload are file names inside store.data_dir, each kept under its
	// name without .dbc. A file that cannot be loaded is a start-up
	// error naming it, as a configuration key is.
	Preload []string `toml:"preload"`
}

// MaxPreload is the registry's bound on loaded databases
// (dbc.MaxDatabases): every preloaded file is one.
const MaxPreload = 8

func (d DBC) validate(dataDir string) []error {
	var errs []error
	if len(d.Preload) > MaxPreload {
		errs = append(errs, fmt.Errorf("dbc.preload: %d files, at most %d", len(d.Preload), MaxPreload))
	}
	if len(d.Preload) > 0 && dataDir == "" {
		errs = append(errs, fmt.Errorf("dbc.preload: store.data_dir is empty: the files are read from it"))
	}
	seen := map[string]bool{}
	for _, f := range d.Preload {
		if !filepath.IsLocal(f) || strings.ContainsRune(f, '\\') {
			errs = append(errs, fmt.Errorf("dbc.preload %q: want a file name inside store.data_dir (no .., no absolute path)", f))
		}
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		if seen[name] {
			errs = append(errs, fmt.Errorf("dbc.preload %q: another file is kept under the name %s", f, name))
		}
		seen[name] = true
	}
	return errs
}
