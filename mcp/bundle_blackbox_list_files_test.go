package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/services/recorder"
	"fieldtap/services/sandbox"
)

// dirCatalog lists a sandbox's roots; kinds stands in for the daemon's
// detector (firmware/daemon's catalog reads files with it, and its tests
// and the sim-board e2e check that on real captures).
type dirCatalog struct {
	sb    *sandbox.Sandbox
	kinds map[string]FileKind
	read  *[]string // names Describe was asked for
}

func (c dirCatalog) Areas() []string { return c.sb.Roots() }
func (c dirCatalog) List(area string) ([]sandbox.Entry, bool, error) {
	return c.sb.List(area)
}
func (c dirCatalog) Scan(context.Context, string, int64, func(*recorder.Frame) bool) (FileScan, error) {
	return FileScan{}, errors.New("this catalog reads no file")
}
func (c dirCatalog) VXLANPorts() []uint16 { return nil }
func (c dirCatalog) Describe(name string, _ int64) (FileKind, error) {
	if c.read != nil {
		*c.read = append(*c.read, name)
	}
	return c.kinds[name], nil
}

// TestListFilesPagesAndReadsOnlyThePage: every file of every area comes
// once over the pages, the area filter keeps one area, and only the
// files on a page are read.
func TestListFilesPagesAndReadsOnlyThePage(t *testing.T) {
	caps, data := t.TempDir(), t.TempDir()
	for i := range 25 {
		os.WriteFile(filepath.Join(caps, fmt.Sprintf("c%02d.log", i)), []byte("x"), 0o600)
	}
	os.WriteFile(filepath.Join(data, "truck.dbc"), []byte("VERSION \"\"\n"), 0o600)
	os.WriteFile(filepath.Join(caps, ".upload-partial"), []byte("x"), 0o600) // hidden: never listed
	sb, err := sandbox.New(sandbox.Root{Name: "captures", Dir: caps}, sandbox.Root{Name: "data", Dir: data})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var read []string
	d := fullDeps(t)
	d.BlackBox.Files = dirCatalog{sb: sb, read: &read, kinds: map[string]FileKind{"captures/c03.log": {Kind: "candump", First: t0, Last: t0.Add(time.Minute)}}}
	s := testServer(t, d, listFiles)
	seen := map[string]int{}
	cursor := ""
	for pages := 0; ; pages++ {
		args := map[string]any{"limit": 10}
		if cursor != "" {
			args["cursor"] = cursor
		}
		r, env := callTool(t, s, "list_files", args)
		if r.IsError {
			t.Fatal(r.Content[0].Text)
		}
		items := env["items"].([]any)
		if len(read) != len(items) {
			t.Errorf("page %d: %d files read for %d rows", pages, len(read), len(items))
		}
		read = read[:0]
		for _, it := range items {
			row := it.(map[string]any)
			seen[row["area"].(string)+"/"+row["name"].(string)]++
			switch row["name"] {
			case "c03.log":
				if row["kind"] != "candump" || row["first_frame"] != "2026-01-02T03:04:05Z" || row["last_frame"] != "2026-01-02T03:05:05Z" {
					t.Errorf("c03.log: %v", row)
				}
			case "truck.dbc":
				if row["kind"] != "other" || row["first_frame"] != nil || !strings.Contains(row["times_note"].(string), "not a capture") {
					t.Errorf("truck.dbc: %v", row)
				}
			}
		}
		next, _ := env["page"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != 26 {
		t.Errorf("%d files seen, want 26: %v", len(seen), seen)
	}
	for name, n := range seen {
		if n != 1 || strings.Contains(name, ".upload") {
			t.Errorf("%s seen %d times", name, n)
		}
	}
	_, env := callTool(t, s, "list_files", map[string]any{"area": "data"})
	if items := env["items"].([]any); len(items) != 1 || items[0].(map[string]any)["name"] != "truck.dbc" {
		t.Errorf("area data: %v", items)
	}
}
