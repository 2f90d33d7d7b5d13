package canbus

// Link is a driver's view of a port's link: what it applied and what the
// controller reported. Drivers differ in what they can see, so a field
// the driver cannot know is nil and Note says why, never a guessed 0.
type Link struct {
	Driver string // "slcan", "socketcan"
	Open   bool   // frames are being read
	// Bitrate applied to (slcan) or read back from (socketcan) the link;
	// 0 before the first session or on a virtual link.
	Bitrate int
	// Mode is "listen-only" or "normal"; "" while the link is not open.
	Mode string
	// BusState is error-active, error-warning, error-passive or bus-off.
	BusState *string
	BusOffs  *uint64
	// Restarts counts controller restarts after bus-off.
	Restarts *uint64
	// Reopens counts sessions after the first: the driver reopened the
	// device after a failure.
	Reopens   int
	LastError string
	Note      string
}

// SetLink gives the port a function returning its driver's link view;
// can_buses calls it on every read. nil removes it.
func (p *Port) SetLink(fn func() Link) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.link = fn
}

// linkView calls the provider outside p.mu: it takes the driver's lock.
func (p *Port) linkView() (*Link, string) {
	p.mu.Lock()
	fn := p.link
	p.mu.Unlock()
	if fn == nil {
		return nil, "this port's source reports no link state (a capture file, a simulated port, or a driver without one)"
	}
	l := fn()
	return &l, ""
}
