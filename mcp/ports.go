package mcp

import (
	"slices"
	"strings"
)

// choosePorts resolves a PortSelector against the ports of one kind (what
// names them as capture_status does): empty selects every port, in order;
// a name the box does not have is refused with the list, in every tool
// alike, so a typo is never an empty answer.
func choosePorts[P any](sel PortSelector, kind string, ports []P, name func(P) string) ([]P, error) {
	if sel.Port == "" {
		return ports, nil
	}
	i := slices.IndexFunc(ports, func(p P) bool { return name(p) == string(sel.Port) })
	if i >= 0 {
		return ports[i : i+1], nil
	}
	names := make([]string, len(ports))
	for j, p := range ports {
		names[j] = name(p)
	}
	have := "this box has no " + kind + " port"
	if len(names) > 0 {
		have = kind + " ports are: " + strings.Join(names, ", ")
	}
	return nil, argErr("port", "capture_status lists every port; omit port for all of them", "no %s port %q; %s", kind, sel.Port, have)
}
