package daemon

import (
	"fieldtap/drivers/canfiles"
	"fieldtap/drivers/canlog"
	"fieldtap/drivers/j1708"
	"fieldtap/drivers/socketcan"
	"fieldtap/services/coverage"
	"fieldtap/services/ports"
)

// unreadable are the port error reasons that are traffic the port saw
// and could not read (the rest are the port's own failures to open or
// read, which its state and restarts show), by the family the traffic
// would have fed, in words.
var unreadable = map[string]struct {
	family coverage.Family
	what   string
}{
	canlog.ReasonMalformed:    {coverage.CAN | coverage.J1939 | coverage.UDS, "log lines that are not CAN frames"},
	canfiles.ReasonMalformed:  {coverage.CAN | coverage.J1939 | coverage.UDS, "records of a vendor CAN log (ASC, BLF, TRC, CSV) that are not readable CAN frames"},
	canfiles.ReasonOverlong:   {coverage.CAN | coverage.J1939 | coverage.UDS, "lines of a vendor CAN log longer than a frame's line"},
	canfiles.ReasonContainer:  {coverage.CAN | coverage.J1939 | coverage.UDS, "BLF log containers that do not decompress: their frames are lost"},
	socketcan.ReasonShortRead: {coverage.CAN | coverage.J1939 | coverage.UDS, "short reads from the CAN socket"},
	socketcan.ReasonLength:    {coverage.CAN | coverage.J1939 | coverage.UDS, "CAN frames of an impossible length"},
	j1708.ErrReasonChecksum:   {coverage.J1708, "J1708 frames failing their checksum"},
	j1708.ErrReasonNoise:      {coverage.J1708, "J1708 bytes read as line noise"},
	j1708.ErrReasonOverlong:   {coverage.J1708, "J1708 runs longer than a message"},
	j1708.ErrReasonDiscard:    {coverage.J1708, "J1708 bytes discarded while resynchronising"},
}

// coverageOf reports what an answer over q covers, from the ports' and
// the stores' counters at this moment.
func (a *analysers) coverageOf(reg *ports.Registry, q coverage.Query) coverage.Report {
	st := reg.Snapshot()
	in := coverage.Inputs{Ports: st, Stores: reg.Budget().Stores}
	if a.sipFeed != nil && q.Families&(coverage.SIP|coverage.Media) != 0 {
		ss, ds := a.sipStats()
		in.NotAnalysed = coverage.SPAN(ds, ss)
	}
	if a.media != nil && q.Families&coverage.Media != 0 {
		in.Suspensions = append(in.Suspensions, coverage.Cause{Family: coverage.Media, Name: "rtp_timing_epochs", Count: a.media.TimingEpochs(),
			What: "RTP timing epochs started again where a sender restarted its timestamps: jitter and delta were measured afresh from each restart (rtp_streams' timing_epochs names the streams)"})
	}
	if a.uds != nil && q.Families&coverage.UDS != 0 {
		for reason, n := range a.uds.Rejected() {
			in.Suspensions = append(in.Suspensions, coverage.Cause{Family: coverage.UDS, Name: "isotp_rejected_" + reason, Count: n,
				What: "ids on ISO-TP identifiers not read as diagnostics (" + reason + "; uds_services lists them)"})
		}
	}
	for _, p := range st {
		for reason, n := range p.Errors {
			if u, ok := unreadable[reason]; ok {
				in.NotAnalysed = append(in.NotAnalysed, coverage.Cause{Family: u.family, Port: p.Name, Name: reason, Count: n, What: u.what})
			}
		}
	}
	return coverage.Build(q, in)
}
