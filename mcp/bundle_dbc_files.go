package mcp

import (
	"fieldtap/services/dbc"
)

type dbcFilesIn struct{}

var dbcFiles = tool[dbcFilesIn, dbcFilesOut]{
	name:  "dbc_files",
	reads: readsNothing,
	desc: "The DBC files in the box's data directory (store.data_dir, subfolders included): file (as dbc_load takes it), size, modified, and the databases loaded from it (name, messages, signals, format warnings). " +
		"dbc.preload in the configuration loads files at start-up.",
	hints: readOnly(),
	run: func(c *call, _ dbcFilesIn) (dbcFilesOut, error) {
		l, err := c.d.DBC.Files()
		if err != nil {
			return dbcFilesOut{}, dbcErr(err)
		}
		out := dbcFilesOut{DataDir: c.d.DBC.Dir(), Files: make([]dbcFileRow, len(l.Files)), More: l.More, Incomplete: l.Unwalked || l.Unreadable > 0}
		for i, f := range l.Files {
			row := dbcFileRow{File: f.Path, Size: f.Size, Modified: f.Modified, Loaded: make([]dbcFileLoaded, len(f.Loaded))}
			for j, db := range f.Loaded {
				row.Loaded[j] = dbcFileLoaded{Name: db.Name, LoadedAt: db.LoadedAt.UTC(), Messages: len(db.Messages), Signals: db.Signals, Warnings: nonNil(db.Warnings)}
			}
			out.Files[i] = row
		}
		if l.More > 0 {
			c.warnf("listed the first %d DBC files; %d more not listed", dbc.MaxListedFiles, l.More)
		}
		if l.Unwalked {
			c.warnf("the walk of the data directory stopped after %d entries: more files may exist", dbc.MaxWalked)
		}
		if l.Unreadable > 0 {
			c.warnf("%d folder(s) of the data directory could not be read", l.Unreadable)
		}
		return out, nil
	},
}
