package config

import (
	"fmt"
	"net"

	"fieldtap/board"
	"fieldtap/drivers/hepin"
)

// HEPOptions are a hep port's driver options.
func HEPOptions(p board.Port) hepin.Options {
	return hepin.Options{Name: p.Name, Listen: p.Listen, AuthKey: p.AuthKey, CaptureIDs: p.CaptureIDs,
		MaxFrame: p.MaxFrame, MaxConnections: p.MaxConnections, BufferBytes: p.BufferBytes}
}

// checkHEPPort checks a hep port's keys. A listener off loopback needs an
// auth_key: HEP is plain UDP and TCP, and the key is what a collector has
// to tell its agents from anyone who can reach the port.
func checkHEPPort(p board.Port) []error {
	var errs []error
	if p.Device != "" {
		errs = append(errs, fmt.Errorf("port %q: device %q: a hep port has no device; it listens on listen", p.Name, p.Device))
	}
	if p.Filter != "" || p.Bitrate != 0 || p.GapMicros != 0 || p.EchoSlackMillis != 0 || p.Transmit {
		errs = append(errs, fmt.Errorf("port %q: filter, bitrate, gap_us, echo_slack_ms and transmit are not keys of a hep port", p.Name))
	}
	o := HEPOptions(p)
	if _, err := hepin.New(o); err != nil {
		return append(errs, err)
	}
	listen := p.Listen
	if listen == "" {
		listen = hepin.DefaultListen
	}
	if host, _, _ := net.SplitHostPort(listen); !isLoopback(host) && p.AuthKey == "" {
		errs = append(errs, fmt.Errorf("port %q: listen %q is not loopback: set auth_key first", p.Name, listen))
	}
	return errs
}

// notHEPKeys refuses a hep port's keys on a port of another driver.
func notHEPKeys(p board.Port) []error {
	if p.Listen != "" || p.AuthKey != "" || len(p.CaptureIDs) > 0 || p.MaxFrame != 0 || p.MaxConnections != 0 || p.BufferBytes != 0 {
		return []error{fmt.Errorf("port %q: listen, auth_key, capture_ids, max_frame, max_connections and buffer_bytes are keys of a hep port, not of driver %q", p.Name, p.Driver)}
	}
	return nil
}
