package daemon

import (
	"cmp"
	"path/filepath"
	"strings"

	"fieldtap/drivers/filesource"
	"fieldtap/firmware/config"
	"fieldtap/mcp"
	"fieldtap/services/sandbox"
)

// dataRoot is the catalog's name for store.data_dir. It is listed, never
// served: the one sandbox that serves files has no such root, so the key
// logs and databases there stay on the box.
const dataRoot = "data"

// fileCatalog is list_files' view: the serving sandbox's roots and
// store.data_dir, each file described by the --source detector.
type fileCatalog struct {
	files *sandbox.Sandbox
	data  *sandbox.Sandbox
}

func newFileCatalog(cfg config.Config, files *sandbox.Sandbox) (*fileCatalog, error) {
	dir, err := filepath.Abs(cfg.Store.DataDir)
	if err != nil {
		return nil, err
	}
	data, err := sandbox.New(sandbox.Root{Name: dataRoot, Dir: dir})
	if err != nil {
		return nil, err
	}
	return &fileCatalog{files: files, data: data}, nil
}

// Areas: captures and data first, what an agent opens and loads; then
// what the box wrote.
func (c *fileCatalog) Areas() []string {
	areas := []string{capturesRoot, dataRoot}
	for _, r := range c.files.Roots() {
		if r != capturesRoot {
			areas = append(areas, r)
		}
	}
	return areas
}

func (c *fileCatalog) sandboxOf(area string) *sandbox.Sandbox {
	if area == dataRoot {
		return c.data
	}
	return c.files
}

func (c *fileCatalog) List(area string) ([]sandbox.Entry, bool, error) {
	return c.sandboxOf(area).List(area)
}

// Describe resolves name as the sandbox does (no symbolic link, a regular
// file under its root) and reads it through the detector.
func (c *fileCatalog) Describe(name string, scanBytes int64) (mcp.FileKind, error) {
	area, _, _ := strings.Cut(name, "/")
	path, err := c.sandboxOf(area).Path(name)
	if err != nil {
		return mcp.FileKind{}, err
	}
	d, err := filesource.Describe(path, scanBytes)
	if err != nil {
		return mcp.FileKind{}, err
	}
	kind := string(d.Format)
	if d.Format == filesource.FormatPcap {
		kind = string(cmp.Or(d.Container, "pcap")) // the magic said pcap; a broken header does not say which
	}
	return mcp.FileKind{Kind: kind, First: d.First, Last: d.Last, LastNotComputed: d.LastNotComputed}, nil
}
