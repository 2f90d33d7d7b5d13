package rules

import (
	"fmt"
	"time"

	"fieldtap/services/canbus"
	"fieldtap/services/j1587"
	"fieldtap/services/j1939"
	"fieldtap/services/ports"
	"fieldtap/services/recorder"
	"fieldtap/services/sipsecurity"
)

// Ports lists the capture ports (*ports.Registry).
type Ports interface {
	Snapshot() []ports.Status
}

// CANPorts lists the CAN ports (*canbus.Store).
type CANPorts interface {
	Ports() []*canbus.Port
}

// RecorderStatus is the on-disk recorder (*recorder.Recorder).
type RecorderStatus interface {
	Status() recorder.Status
}

// J1939Faults are the J1939 DM1 and DM2 (*j1939.Store).
type J1939Faults interface {
	Faults() []j1939.Fault
}

// J1587Faults are the J1708 fault tables (*j1587.Store).
type J1587Faults interface {
	Faults() []j1587.FaultEntry
}

// Box reads the box's own figures; a nil field makes its kinds no_data
// with the reason.
type Box struct {
	Ports    Ports
	CAN      CANPorts
	Recorder RecorderStatus
	J1939    J1939Faults
	J1587    J1587Faults
	SIP      SIPStore
	Media    Media
	// SIPSecurity are the thresholds sip_security_findings uses
	// (sipsecurity.Defaults when zero).
	SIPSecurity sipsecurity.Thresholds
}

// Read implements Reader.
func (b Box) Read(r Rule, now time.Time) Reading {
	switch r.Kind {
	case KindPortSilent, KindPortDrops:
		return b.port(r)
	case KindBusLoad:
		return b.busLoad(r, now)
	case KindDiskFree, KindRecGaps:
		return b.recorder(r)
	case KindDM1:
		return b.dm1(r)
	case KindJ1587:
		return b.j1587(r)
	case KindSIPASR, KindSIPNER, KindSIPPDD:
		return b.calls(r, now)
	case KindMOSShare:
		return b.mosShare(r, now)
	case KindRegFailures:
		return b.regFailures(r, now)
	case KindSIPSecurity:
		return b.security(r, now)
	}
	return Reading{Why: "kind " + r.Kind + " is not read on this box"}
}

func (b Box) port(r Rule) Reading {
	if b.Ports == nil {
		return Reading{Why: "no capture ports"}
	}
	for _, p := range b.Ports.Snapshot() {
		if p.Name != r.Port {
			continue
		}
		ev := Evidence{Tool: "capture_status", Args: map[string]string{}, Figures: map[string]float64{"frames": float64(p.Frames)}}
		if r.Kind == KindPortSilent {
			silent := p.State == ports.StateSilent || p.State == ports.StateDown || p.State == ports.StateGone
			v := 0.0
			if silent {
				v = 1
			}
			ev.Figures["silent"] = v
			return Reading{OK: true, Value: v, Evidence: ev}
		}
		var drops uint64
		for cause, n := range p.Drops {
			drops += n
			ev.Figures["drops_"+cause] = float64(n)
		}
		return Reading{OK: true, Value: float64(drops), Evidence: ev}
	}
	return Reading{Why: fmt.Sprintf("no port %q", r.Port)}
}

func (b Box) busLoad(r Rule, now time.Time) Reading {
	if b.CAN == nil {
		return Reading{Why: "no CAN ports"}
	}
	for _, p := range b.CAN.Ports() {
		if p.Name() != r.Port {
			continue
		}
		secs := p.Seconds()
		// The newest second that has ended: the one still filling reads low.
		for i := len(secs) - 1; i >= 0 && i >= len(secs)-2; i-- {
			if s := secs[i]; !s.Start.Add(time.Second).After(now) {
				return Reading{OK: true, Value: s.Load, Evidence: Evidence{
					Tool: "bus_load", Args: map[string]string{"port": r.Port, "since": s.Start.UTC().Format(time.RFC3339Nano)},
					Figures: map[string]float64{"load": s.Load, "frames": float64(s.Frames), "bits": float64(s.Bits)},
				}}
			}
		}
		return Reading{Why: fmt.Sprintf("CAN port %q has no complete second yet", r.Port)}
	}
	return Reading{Why: fmt.Sprintf("no CAN port %q", r.Port)}
}

func (b Box) recorder(r Rule) Reading {
	if b.Recorder == nil {
		return Reading{Why: "the recorder is off"}
	}
	st := b.Recorder.Status()
	ev := Evidence{Tool: "capture_status", Args: map[string]string{}, Figures: map[string]float64{"gaps": float64(st.GapsTotal), "write_errors": float64(st.WriteErrors)}}
	if r.Kind == KindRecGaps {
		return Reading{OK: true, Value: float64(st.GapsTotal), Evidence: ev}
	}
	if st.FreeBytes == nil {
		return Reading{Why: "the recorder's file system does not say its free space"}
	}
	ev.Figures["free_bytes"] = float64(*st.FreeBytes)
	return Reading{OK: true, Value: float64(*st.FreeBytes), Evidence: ev}
}

// dm1 counts the sources whose latest DM1 lists r's SPN (and FMI).
func (b Box) dm1(r Rule) Reading {
	if b.J1939 == nil {
		return Reading{Why: "no J1939 store"}
	}
	ev := Evidence{Tool: "j1939_faults", Args: map[string]string{}, Figures: map[string]float64{}}
	if r.Port != "" {
		ev.Args["port"] = r.Port
	}
	n := 0
	for _, f := range b.J1939.Faults() {
		if f.Kind != "DM1" || (r.Port != "" && f.Port != r.Port) {
			continue
		}
		for _, d := range f.DTCs {
			if int(d.SPN) == r.Code && (r.FMI == nil || int(d.FMI) == *r.FMI) {
				n++
				ev.Figures[fmt.Sprintf("%s/sa%d/fmi%d/oc", f.Port, f.SA, d.FMI)] = float64(d.OC)
			}
		}
	}
	return Reading{OK: true, Value: float64(n), Evidence: ev}
}

// j1587 counts the MIDs whose latest table lists r's PID (and FMI)
// active. SIDs are left out: a SID's meaning depends on its MID.
func (b Box) j1587(r Rule) Reading {
	if b.J1587 == nil {
		return Reading{Why: "no J1587 store"}
	}
	ev := Evidence{Tool: "j1587_faults", Args: map[string]string{}, Figures: map[string]float64{}}
	n := 0
	for _, f := range b.J1587.Faults() {
		if f.IsSID || !f.Active || f.Code != r.Code || (r.FMI != nil && f.FMI != *r.FMI) {
			continue
		}
		n++
		ev.Figures[fmt.Sprintf("mid%d/fmi%d", f.MID, f.FMI)] = 1
	}
	return Reading{OK: true, Value: float64(n), Evidence: ev}
}
