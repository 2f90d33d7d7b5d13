package config

import (
	"fmt"
	"slices"

	"fieldtap/services/netdecode"
	"fieldtap/services/trunk"
)

// DefaultVXLANPorts is VXLAN's IANA port alone (RFC 7348).
var DefaultVXLANPorts = []int{netdecode.DefaultVXLANPort}

// validatePorts checks a list of ports the decoder compares with every
// datagram or segment: at most max, each a port of proto, none twice.
func validatePorts(key, proto string, ports []int, max int) []error {
	if len(ports) > max {
		return []error{fmt.Errorf("%s %v: at most %d ports", key, ports, max)}
	}
	var errs []error
	for i, p := range ports {
		if p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("%s: %d is not a %s port (1 to 65535)", key, p, proto))
		}
		if slices.Contains(ports[:i], p) {
			errs = append(errs, fmt.Errorf("%s: %d is listed twice", key, p))
		}
	}
	return errs
}

// validateVXLANPorts checks vxlan_ports: at most netdecode.MaxVXLANPorts
// (each is compared with every UDP datagram). An empty list opens no
// VXLAN.
func validateVXLANPorts(ports []int) []error {
	return validatePorts("vxlan_ports", "UDP", ports, netdecode.MaxVXLANPorts)
}

// uint16s is a validated port list as the decoders take it.
func uint16s(ports []int) []uint16 {
	out := make([]uint16, 0, len(ports))
	for _, p := range ports {
		out = append(out, uint16(p))
	}
	return out
}

// DecodeOptions are the SPAN decoder's options from the configuration:
// which UDP ports carry VXLAN. c must have been validated.
func (c Config) DecodeOptions() netdecode.Options {
	return netdecode.Options{VXLANPorts: uint16s(c.VXLANPorts)}
}

// DefaultSIPSPorts is SIP over TLS's well-known port alone (RFC 3261 §26.2).
var DefaultSIPSPorts = []int{trunk.SIPSPort}

// maxSIPSPorts bounds sips_ports: each is compared with every TCP segment.
const maxSIPSPorts = 8

// validateSIPSPorts checks sips_ports: at most maxSIPSPorts (each is
// compared with every TCP segment). An empty list reads no TLS handshake.
func validateSIPSPorts(ports []int) []error {
	return validatePorts("sips_ports", "TCP", ports, maxSIPSPorts)
}

// TrunkOptions are trunk health's options from the configuration: which
// TCP ports carry SIP over TLS. c must have been validated.
func (c Config) TrunkOptions() trunk.Options {
	return trunk.Options{SIPSPorts: uint16s(c.SIPSPorts)}
}
