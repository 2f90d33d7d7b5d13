package daemon

import (
	"fieldtap/drivers/capture"
	"fieldtap/mcp"
)

// analysers holds the stores that analysers fill, one set per daemon. Each
// port's consumer goroutine calls feed for every frame after storing it.
type analysers struct{}

func newAnalysers() (*analysers, error) { return &analysers{}, nil }

// feed returns what a port of this kind feeds with each frame, besides its
// frame store. It runs on the port's consumer goroutine.
func (a *analysers) feed(kind capture.Kind) func(capture.Frame) {
	return nil
}

// deps adds the stores tools read to d.
func (a *analysers) deps(d *mcp.Deps) {}
