package daemon

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/filesource"
	"fieldtap/firmware/config"
	"fieldtap/mcp"
	"fieldtap/services/recorder"
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
	vxlan []uint16 // the tunnels find_in_captures opens, as the SPAN decoder does
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
	return &fileCatalog{files: files, data: data, vxlan: cfg.DecodeOptions().VXLANPorts}, nil
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
	if area == dataRoot {
		// The data area holds what an upload into it was checked to be.
		kind, err := checkData(name, path)
		if err != nil {
			return mcp.FileKind{}, err
		}
		return mcp.FileKind{Kind: kind, Untimed: true}, nil
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

// VXLANPorts are the UDP ports Scan's caller opens VXLAN on.
func (c *fileCatalog) VXLANPorts() []uint16 { return c.vxlan }

// Scan plays one capture file of the captures area through the reader
// --source would use and hands each frame to fn, numbered from 0 in the
// file, until fn says stop or maxBytes of frame data were read. Frame
// data is lent to fn for the call only.
func (c *fileCatalog) Scan(ctx context.Context, name string, maxBytes int64, fn func(f *recorder.Frame) bool) (mcp.FileScan, error) {
	var st mcp.FileScan
	if area, _, _ := strings.Cut(name, "/"); area != capturesRoot {
		return st, fmt.Errorf("%s: only capture files (%s/NAME) are searched", name, capturesRoot)
	}
	path, err := c.files.Path(name)
	if err != nil {
		return st, err
	}
	src, err := filesource.Open(name, path, slog.New(slog.DiscardHandler))
	if err != nil {
		return st, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var counters capture.Counters
	h := capture.NewHandoff(8, &counters)
	done := make(chan error, 1)
	go func() {
		done <- src.Run(ctx, h)
		h.Close()
	}()
	stopped := false
	for {
		b, ok := h.Receive()
		if !ok {
			break
		}
		for i := range b.Frames {
			f := &b.Frames[i]
			if stopped {
				break
			}
			if st.Bytes+int64(len(f.Data)) > maxBytes {
				st.Cut, st.CutAt, stopped = true, f.Time, true
				cancel()
				break
			}
			st.Bytes += int64(len(f.Data))
			rf := recorder.Frame{Port: name, Link: uint16(f.Link), Time: f.Time, Data: f.Data, OrigLen: f.OrigLen, Segment: name, Offset: int64(st.Frames)}
			st.Frames++
			if !fn(&rf) {
				stopped = true
				cancel()
			}
		}
		h.Release(b)
	}
	if err := <-done; err != nil && !stopped && ctx.Err() == nil {
		return st, fmt.Errorf("%s: %w", name, err)
	}
	if !stopped {
		if err := ctx.Err(); err != nil {
			return st, err
		}
	}
	return st, nil
}
