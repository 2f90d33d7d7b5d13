package daemon

import (
	"fmt"
	"time"

	"fieldtap/board"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/ethernet"
	"fieldtap/drivers/hepin"
	"fieldtap/drivers/j1708"
	"fieldtap/drivers/slcan"
	"fieldtap/drivers/socketcan"
	"fieldtap/firmware/config"
)

// openPort builds the Source for one configured port. Config.Validate has
// already checked the driver name.
func openPort(p board.Port) (capture.Source, error) {
	switch p.Driver {
	case "j1708":
		return j1708.New(j1708.Options{Name: p.Name, Device: p.Device, Gap: time.Duration(p.GapMicros) * time.Microsecond,
			EchoSlack: time.Duration(p.EchoSlackMillis) * time.Millisecond})
	case "slcan":
		return slcan.New(slcan.Options{Name: p.Name, Device: p.Device, Bitrate: p.Bitrate})
	case "socketcan":
		return socketcan.New(socketcan.Options{Name: p.Name, Interface: p.Device, Bitrate: p.Bitrate})
	case "afpacket":
		return ethernet.New(ethernet.Options{Name: p.Name, Device: p.Device, Filter: p.Filter})
	case "hep":
		return hepin.New(config.HEPOptions(p))
	}
	return nil, fmt.Errorf("port %s: driver %q is not in this build", p.Name, p.Driver)
}
