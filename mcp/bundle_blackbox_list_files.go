package mcp

import (
	"cmp"
	"context"
	"hash/fnv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/recorder"
	"fieldtap/services/sandbox"
)

// FileCatalog is the files an agent may name (the daemon's, over the
// --source detector): store.capture_dir, store.data_dir, the exports and
// the evidence bundles.
type FileCatalog interface {
	// Areas names the areas in listing order.
	Areas() []string
	// List lists one area without reading any file, at most
	// sandbox.MaxEntries; truncated says more exist.
	List(area string) (entries []sandbox.Entry, truncated bool, err error)
	// Describe reads the head and tail of one listed file (AREA/NAME), and
	// the whole of a pcap of at most scanBytes to find its last frame.
	Describe(name string, scanBytes int64) (FileKind, error)
	// Scan reads one capture file (captures/NAME) frame by frame through
	// the --source reader, handing each to fn until it says stop or
	// maxBytes of frame data were read (find_in_captures' file).
	Scan(ctx context.Context, name string, maxBytes int64, fn func(f *recorder.Frame) bool) (FileScan, error)
	// VXLANPorts are the UDP ports the box opens VXLAN on.
	VXLANPorts() []uint16
}

// FileScan is how far Scan read: frames and their bytes, and where the
// byte bound cut it.
type FileScan struct {
	Frames uint64
	Bytes  int64
	Cut    bool
	CutAt  time.Time
}

// FileKind is what Describe found. Kind is "" for a file the detector
// does not recognise.
type FileKind struct {
	Kind            string
	First, Last     time.Time // zero: none
	LastNotComputed string
	// Untimed: a file that holds no frames (a DBC, a TLS key log), so no
	// first or last time is looked for.
	Untimed bool
}

// listFilesScanBytes bounds what one list_files answer reads to find
// pcap files' last frames (the first 64 MiB of pcaps on its page; a pcap
// past it, or over the 16 MiB one file may take, says so).
const listFilesScanBytes = 64 << 20

type fileAreaArg string

func (fileAreaArg) argSchema() *jsonschema.Schema {
	return enumArg("one area only", []string{"captures", "data", "exports", "evidence"})
}

type listFilesIn struct {
	Area fileAreaArg `json:"area,omitempty"`
	Paging
	Projection
}

var listFiles = tool[listFilesIn, page[fileRow]]{
	name:  "list_files",
	reads: readsNothing,
	desc:  "Files by area: name, bytes, modified, kind (the --source detector; data: dbc or tls_keylog), captures' first/last frame time.",
	hints: readOnly(),
	ids:   []string{"area", "name"},
	run: func(c *call, in listFilesIn) (page[fileRow], error) {
		cat := c.d.BlackBox.Files
		var rows []fileRow
		for ai, area := range cat.Areas() {
			if in.Area != "" && string(in.Area) != area {
				continue
			}
			entries, truncated, err := cat.List(area)
			if err != nil {
				c.warnf("%s: not listed: %v", area, err)
				continue
			}
			if truncated {
				c.warnf("%s holds more than %d files: only the first %d by name are listed", area, sandbox.MaxEntries, sandbox.MaxEntries)
			}
			for _, e := range entries {
				rel := e.Name[len(area)+1:]
				h := fnv.New64a()
				h.Write([]byte(rel))
				rows = append(rows, fileRow{Area: area, Name: rel, Bytes: e.Bytes, Modified: e.Modified, key: rowKey{uint64(ai), h.Sum64()}})
			}
		}
		p, err := pageSlice(c, in.Paging, rows, func(r fileRow) rowKey { return r.key })
		if err != nil {
			return p, err
		}
		// Only the page's files are read, each bounded, and the pcap scans
		// of one answer together.
		scan := int64(listFilesScanBytes)
		for i := range p.Items {
			describeRow(c, &p.Items[i], &scan)
		}
		return p, nil
	},
}

// describeRow fills r's kind and times from the detector.
func describeRow(c *call, r *fileRow, scan *int64) {
	fk, err := c.d.BlackBox.Files.Describe(r.Area+"/"+r.Name, *scan)
	if err != nil {
		r.Kind, r.TimesNote = "other", "not read: "+err.Error()
		return
	}
	r.Kind = fk.Kind
	if (fk.Kind == "pcap" || fk.Kind == "pcapng") && r.Bytes <= *scan {
		*scan -= r.Bytes
	}
	switch {
	case fk.Untimed:
		return
	case fk.Kind == "":
		r.Kind, r.TimesNote = "other", "not a capture the --source detector reads"
		return
	case fk.First.IsZero():
		r.TimesNote = "no frame found"
		return
	}
	r.First = new(fk.First.UTC())
	if !fk.Last.IsZero() {
		r.Last = new(fk.Last.UTC())
	} else {
		r.TimesNote = cmp.Or(fk.LastNotComputed, "no last frame found in the file's tail")
	}
}
