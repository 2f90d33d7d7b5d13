package mcp

import (
	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
	"fieldtap/services/obd"
)

type obdTraceIn struct {
	Mode udsSIDArg `json:"mode,omitempty" jsonschema:"only this mode, hex (01, 0x09)"`
	PID  udsSIDArg `json:"pid,omitempty" jsonschema:"only this PID or mode 09 information type, hex (0C, 0x02)"`
	ECU  canIDArg  `json:"ecu,omitempty" jsonschema:"only answers from this CAN id, hex (7E8, 18DAF110)"`
	PortSelector
	window
	Paging
	Projection
}

// obdKey orders rows by port, transaction, answer and value. A frame
// number fits in 48 bits for years of a busy bus.
func obdKey(index map[string]uint64) func(obdTraceRow) rowKey {
	return func(r obdTraceRow) rowKey {
		return rowKey{index[r.Port]<<48 | r.ID, uint64(r.Answer)<<32 | uint64(r.Index)}
	}
}

var obdTraceTool = tool[obdTraceIn, page[obdTraceRow]]{
	name:  "obd_trace",
	reads: readsUDS,
	desc: "OBD-II (SAE J1979) answers overheard on the CAN ports, from the UDS store's transactions on OBD ids (7DF/7E0-7E7 to 7E8-7EF, 18DB33F1/18DAxxF1 to 18DAF1xx): one row per value with ecu, mode, pid, name, value, unit and raw bytes; " +
		"supported-PID bitmaps, freeze frames (frame), DTCs as P0301 (code), VIN, calibration ID and ECU name (fenced text), refusals (nrc). Paged.",
	hints: readOnly(),
	ids:   []string{"port", "id", "answer", "index"},
	text:  []textSource{textUDS},
	run: func(c *call, in obdTraceIn) (page[obdTraceRow], error) {
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return page[obdTraceRow]{}, err
		}
		sp, err := in.span()
		if err != nil {
			return page[obdTraceRow]{}, err
		}
		mode, pid := udsHex(string(in.Mode)), udsHex(string(in.PID))
		if in.Mode != "" && !obd.IsMode(byte(mode)) || mode > 0xFF {
			return page[obdTraceRow]{}, argErr("mode", "name a decoded mode: 01, 02, 03, 07, 09 or 0A", "mode %s is not one of them", in.Mode)
		}
		if pid > 0xFF {
			return page[obdTraceRow]{}, argErr("pid", "name a one-byte PID such as 0C", "%s is more than one byte", in.PID)
		}
		pidHex := isotp.Hex8(byte(pid))
		ecu := ""
		if in.ECU != "" {
			id := hexValue(string(in.ECU))
			if len(in.ECU) > 3 {
				id |= wire.CANEFF
			}
			ecu = wire.FormatCANID(id)
		}
		chosen := map[string]bool{}
		for _, p := range ps {
			chosen[p.Name()] = true
		}
		st := c.d.UDS.Status()
		if st.Kept.Evicted > 0 {
			c.warnf("the store evicted its %d oldest transactions; their answers are not shown", st.Kept.Evicted)
		}
		for _, p := range st.Ports {
			if chosen[p.Port] && p.Outstanding > 0 {
				c.warnf("%s: %d request(s) still wait for answers (a functional request stays open for more ECUs until the tester's next request or 5 s): not shown yet", p.Port, p.Outstanding)
			}
		}
		var rows []obdTraceRow
		unanswered, dropped := 0, 0
		c.d.UDS.Transactions().Range(0, func(_ uint64, r isotp.Record) bool {
			if !chosen[r.Port] || in.Mode != "" && uint32(r.SID) != mode || !udsInWindow(&r.Transaction, sp) {
				return true
			}
			x, ok := obd.Read(&r.Transaction)
			if !ok {
				return true
			}
			if x.Unanswered {
				unanswered++
			}
			dropped += x.Dropped
			for _, it := range x.Items {
				if (in.PID == "" || it.PID == pidHex) && (ecu == "" || it.ECU == ecu) && sp.holds(it.Time) {
					rows = append(rows, obdTraceRowOf(r.Port, r.ID, it))
				}
			}
			return true
		})
		if unanswered > 0 {
			c.warnf("%d OBD request(s) had no answer (an ECU stays silent on a functional request for a PID it lacks); uds_trace status=no_response lists them", unanswered)
		}
		if dropped > 0 {
			c.warnf("%d value(s) past the %d decoded per answer are not shown", dropped, obd.MaxValues)
		}
		return pageSlice(c, in.Paging, rows, obdKey(canPortIndex(c.d)))
	},
}
