package config

import (
	"fmt"
	"slices"

	"fieldtap/services/netdecode"
	"fieldtap/services/trunk"
)

// DefaultVXLANPorts is VXLAN's IANA port alone (RFC 7348).
var DefaultVXLANPorts = []int{netdecode.DefaultVXLANPort}

// validateVXLANPorts checks vxlan_ports: at most netdecode.MaxVXLANPorts
// (each is compared with every UDP datagram), each a UDP port, none twice.
// An empty list opens no VXLAN.
func validateVXLANPorts(ports []int) []error {
	if len(ports) > netdecode.MaxVXLANPorts {
		return []error{fmt.Errorf("vxlan_ports %v: at most %d ports", ports, netdecode.MaxVXLANPorts)}
	}
	var errs []error
	for i, p := range ports {
		if p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("vxlan_ports: %d is not a UDP port (1 to 65535)", p))
		}
		if slices.Contains(ports[:i], p) {
			errs = append(errs, fmt.Errorf("vxlan_ports: %d is listed twice", p))
		}
	}
	return errs
}

// DecodeOptions are the SPAN decoder's options from the configuration:
// which UDP ports carry VXLAN. c must have been validated.
func (c Config) DecodeOptions() netdecode.Options {
	ports := make([]uint16, 0, len(c.VXLANPorts))
	for _, p := range c.VXLANPorts {
		ports = append(ports, uint16(p))
	}
	return netdecode.Options{VXLANPorts: ports}
}

// DefaultSIPSPorts is SIP over TLS's well-known port alone (RFC 3261 §26.2).
var DefaultSIPSPorts = []int{trunk.SIPSPort}

// maxSIPSPorts bounds sips_ports: each is compared with every TCP segment.
const maxSIPSPorts = 8

// validateSIPSPorts checks sips_ports: at most maxSIPSPorts, each a TCP
// port, none twice. An empty list reads no TLS handshake.
func validateSIPSPorts(ports []int) []error {
	if len(ports) > maxSIPSPorts {
		return []error{fmt.Errorf("sips_ports %v: at most %d ports", ports, maxSIPSPorts)}
	}
	var errs []error
	for i, p := range ports {
		if p < 1 || p > 65535 {
			errs = append(errs, fmt.Errorf("sips_ports: %d is not a TCP port (1 to 65535)", p))
		}
		if slices.Contains(ports[:i], p) {
			errs = append(errs, fmt.Errorf("sips_ports: %d is listed twice", p))
		}
	}
	return errs
}

// TrunkOptions are trunk health's options from the configuration: which
// TCP ports carry SIP over TLS. c must have been validated.
func (c Config) TrunkOptions() trunk.Options {
	ports := make([]uint16, 0, len(c.SIPSPorts))
	for _, p := range c.SIPSPorts {
		ports = append(ports, uint16(p))
	}
	return trunk.Options{SIPSPorts: ports}
}
