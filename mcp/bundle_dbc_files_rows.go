package mcp

import "time"

// dbcFileLoaded is one database read from a file.
type dbcFileLoaded struct {
	Name     string    `json:"name"`
	LoadedAt time.Time `json:"loaded_at"`
	Messages int       `json:"messages"`
	Signals  int       `json:"signals"`
	// Warnings name the lines of deviations read anyway (dbc_load's).
	Warnings []string `json:"warnings"`
}

// dbcFileRow is one DBC file of the data directory.
type dbcFileRow struct {
	File     string          `json:"file"` // as dbc_load takes it
	Size     int64           `json:"size_bytes"`
	Modified time.Time       `json:"modified_at"`
	Loaded   []dbcFileLoaded `json:"loaded"` // empty when no database was read from it
}

type dbcFilesOut struct {
	DataDir string       `json:"data_dir"`
	Files   []dbcFileRow `json:"files"`
	// More counts the files past the list's bound; Incomplete says the
	// walk stopped at its bound or could not read a directory.
	More       int  `json:"more_files"`
	Incomplete bool `json:"walk_incomplete"`
}
