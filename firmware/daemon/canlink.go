package daemon

import (
	"fieldtap/board"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/slcan"
	"fieldtap/drivers/socketcan"
	"fieldtap/services/canbus"
)

// linkCAN creates each CAN source's store port before attach does, so
// that the port divides bus load by the configured bitrate (attach only
// knows the name and kind; it then finds the port made here), and gives
// the port its driver's link view for can_buses. Sources without a
// configured rate (sim, capture files) get canbus.DefaultBitrate, as the
// drivers do. A port over canbus.MaxPorts is left for attach to refuse.
func (a *analysers) linkCAN(sources []capture.Source, ports []board.Port) {
	rates := make(map[string]int, len(ports))
	for _, pc := range ports {
		rates[pc.Name] = pc.Bitrate
	}
	for _, src := range sources {
		if src.Kind() != capture.KindCAN {
			continue
		}
		p, err := a.can.Port(src.Name(), rates[src.Name()])
		if err != nil {
			continue
		}
		if fn := canLinkView(src); fn != nil {
			p.SetLink(fn)
		}
	}
}

// canLinkView adapts a driver's Status to canbus.Link; nil when the
// source's driver has no link view.
func canLinkView(src capture.Source) func() canbus.Link {
	switch s := src.(type) {
	case *slcan.Source:
		return func() canbus.Link { return slcanLink(s.Status()) }
	case *socketcan.Source:
		return func() canbus.Link { return socketcanLink(s.Status()) }
	}
	return nil
}

// slcanLink: a Lawicel adapter reports no bus state or error counters
// over the ASCII protocol as this driver speaks it, so those are null.
func slcanLink(st slcan.Status) canbus.Link {
	l := canbus.Link{
		Driver: "slcan", Open: st.Open, Bitrate: st.Bitrate, Reopens: max(st.Sessions-1, 0), LastError: st.LastError,
		Note: "slcan adapters report no bus state, bus-off or restart counts: those are null",
	}
	if st.Open {
		l.Mode = linkMode(st.ListenOnly)
	}
	return l
}

func socketcanLink(st socketcan.Status) canbus.Link {
	offs, restarts := st.BusOffs, st.Restarts
	l := canbus.Link{
		Driver: "socketcan", Open: st.Open, Bitrate: st.Bitrate, Reopens: max(st.Sessions-1, 0), LastError: st.LastError,
		BusOffs: &offs, Restarts: &restarts,
	}
	if st.LinkKind != "" {
		l.Mode = linkMode(st.ListenOnly)
	}
	if st.State != socketcan.StateUnknown {
		s := string(st.State)
		l.BusState = &s
	} else {
		l.Note = "bus_state is null until an error frame reports one"
	}
	return l
}

func linkMode(listenOnly bool) string {
	if listenOnly {
		return "listen-only"
	}
	return "normal"
}
