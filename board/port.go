package board

// Port is one capture port: a board profile's [[port]] table and the
// configuration file's are the same shape, so both open ports by one
// mechanism. Which fields apply depends on the driver.
type Port struct {
	Name   string `toml:"name"`   // what operators and tools call it ("j1708", "can1")
	Driver string `toml:"driver"` // see Drivers
	Device string `toml:"device"` // tty path or network interface
	// GapMicros is the idle time that ends a J1708 message (0 = driver default).
	GapMicros int `toml:"gap_us"`
	// EchoSlackMillis is how long past a J1708 message's wire time its
	// read-back may take before a send counts as no echo (0 = driver
	// default, 50 ms); a USB adapter with a long latency timer needs more.
	EchoSlackMillis int `toml:"echo_slack_ms"`
	// Bitrate of a CAN port in bit/s (0 = 250000, J1939). CAN ports
	// always open listen-only.
	Bitrate int `toml:"bitrate"`
	// Transmit lets this port transmit through the gatekeeper; every other
	// gate still applies (docs/transmit-safety.md). Default false.
	Transmit bool `toml:"transmit"`
	// Filter is an afpacket port's capture filter: a BPF program as
	// `tcpdump -dd EXPR` prints it (docs/configuration.md); empty keeps all.
	Filter string `toml:"filter"`
	// SilentAfter is how long the port may deliver nothing, its link up,
	// before capture_status shows it silent: a duration such as "2m";
	// empty takes the default (docs/configuration.md).
	SilentAfter string `toml:"silent_after"`

	// The keys of a hep port (driver "hep", docs/configuration.md): the
	// address both its UDP and TCP listeners bind, the auth key every
	// packet must carry, the capture ids taken, the largest packet, the
	// most TCP connections at once and the bytes of frames that may wait
	// for the analysers. Zero values take the driver's defaults.
	Listen         string   `toml:"listen"`
	AuthKey        string   `toml:"auth_key"`
	CaptureIDs     []uint32 `toml:"capture_ids"`
	MaxFrame       int      `toml:"max_frame"`
	MaxConnections int      `toml:"max_connections"`
	BufferBytes    int      `toml:"buffer_bytes"`
}
