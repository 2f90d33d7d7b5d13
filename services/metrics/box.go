package metrics

import (
	"maps"
	"time"

	"fieldtap/services/canbus"
	"fieldtap/services/ports"
	"fieldtap/services/recorder"
	"fieldtap/services/rules"
	"fieldtap/services/transmit"
)

// collector reads Sources at every scrape.
type collector struct {
	s Sources
	d descs
}

type descs struct {
	portFrames, portBytes, portDrops, portErrors, portRestarts, portLive     *metricDesc
	storeItems, storeBytes, storeLimitItems, storeLimitBytes                 *metricDesc
	storeEvictions, storeOversize                                            *metricDesc
	busLoad                                                                  *metricDesc
	sipDialogs, sipDialogsEvicted, sipMessages, sipMessagesEvicted           *metricDesc
	armed, plansStored, attempts, refusals, plans, modeErrors, auditFailures *metricDesc
	mcpAudit, mcpCalls                                                       *metricDesc
	expSent, expSentBytes, expDropped, expQueued, expQueuedBytes, expUp      *metricDesc
	portState                                                                *metricDesc
	connsOpen, connsMax, connsRefused, connsClosedIdle                       *metricDesc
	recState, recGaps, recWriteErrors, recUsed, recQuota, recFree, recOldest *metricDesc
	ruleState, ruleValue, ruleTransitions                                    *metricDesc
}

// portStates are the values of fieldtap_port_state's state label, each
// exported for every port (1 for the one it is in) so a rule can read
// any of them from start.
var portStates = []string{ports.StateCapturing, ports.StateSilent, ports.StateDown, ports.StateGone, ports.StateRestarting, ports.StateEnded}

// recorderStates are fieldtap_recorder_state's values.
var recorderStates = []string{recorder.StateRecording, recorder.StateRAMOnly, recorder.StateClosed}

func desc(name, help string, labels ...string) *metricDesc {
	return &metricDesc{name: "fieldtap_" + name, help: help, labels: labels}
}

func newCollector(s Sources) *collector {
	if s.Now == nil {
		s.Now = time.Now
	}
	return &collector{s: s, d: descs{
		portFrames:   desc("port_frames_total", "Frames delivered by a capture port.", "port", "kind"),
		portBytes:    desc("port_bytes_total", "Bytes of the frames delivered by a capture port.", "port", "kind"),
		portDrops:    desc("port_drops_total", "Frames lost before any analyser saw them, by cause.", "port", "cause"),
		portErrors:   desc("port_errors_total", "Errors a capture port counted, by reason.", "port", "reason"),
		portRestarts: desc("port_restarts_total", "Times a live port was started again after it failed, plus its CAN controller's bus-off restarts.", "port"),
		portState:    desc("port_state", "1 for the state a port is in now, 0 for the others (capturing, silent, down, gone, restarting, ended).", "port", "state"),
		portLive:     desc("port_live", "1 while a port captures live traffic, 0 for a file or a finished source.", "port"),

		storeItems:      desc("store_items", "Items (frames, messages) a port's store keeps now.", "port"),
		storeBytes:      desc("store_bytes", "Bytes a port's store keeps now.", "port"),
		storeLimitItems: desc("store_limit_items", "Items a port's store may keep.", "port"),
		storeLimitBytes: desc("store_limit_bytes", "Bytes a port's store may keep.", "port"),
		storeEvictions:  desc("store_evictions_total", "Items a port's store evicted to stay within its limits.", "port"),
		storeOversize:   desc("store_oversize_total", "Items a port's store refused as larger than its byte limit.", "port"),

		recState:       desc("recorder_state", "1 for the recorder's state now, 0 for the others (recording, ram_only: a write failed and frames live in RAM only, closed).", "state"),
		recGaps:        desc("recorder_gaps_total", "Spans the recorder could not keep on disk."),
		recWriteErrors: desc("recorder_write_errors_total", "Recorder writes that failed."),
		recUsed:        desc("recorder_used_bytes", "Bytes of segments and indexes on disk."),
		recQuota:       desc("recorder_quota_bytes", "Bytes the recorder may keep on disk (its quota)."),
		recFree:        desc("recorder_free_bytes", "Bytes left on the recorder's file system."),
		recOldest:      desc("recorder_oldest_segment_timestamp_seconds", "Unix time of the oldest frame kept on disk; absent before the first segment."),

		ruleState:       desc("rule_state", "1 while a configured rule fires, 0 otherwise (ok, pending, no_data).", "rule", "severity"),
		ruleValue:       desc("rule_value", "A rule's value over its window; absent while the rule has no data.", "rule"),
		ruleTransitions: desc("rule_transitions_total", "A rule's state changes since start.", "rule"),

		busLoad: desc("can_bus_load_ratio", "Bus load of the last complete measured second, bits over bitrate.", "port"),

		sipDialogs:         desc("sip_dialogs", "SIP dialogs the store keeps now."),
		sipDialogsEvicted:  desc("sip_dialogs_evicted_total", "SIP dialogs evicted to stay within the store's limits."),
		sipMessages:        desc("sip_messages_total", "SIP messages stored."),
		sipMessagesEvicted: desc("sip_messages_evicted_total", "Raw SIP messages evicted by the message ring."),

		armed:         desc("transmit_armed", "1 while the transmit-arm input is on."),
		plansStored:   desc("transmit_plans_stored", "Dry-run plans the transmitter keeps now."),
		attempts:      desc("transmit_attempts_total", "Transmit executions by how they ended.", "outcome"),
		refusals:      desc("transmit_refusals_total", "Refused transmit executions by the gate that refused.", "gate"),
		plans:         desc("transmit_plans_total", "Dry-run plans made."),
		modeErrors:    desc("transmit_mode_errors_total", "Failures to switch a port's controller mode."),
		auditFailures: desc("transmit_audit_failures_total", "Refusal records the transmit audit file could not take."),

		mcpAudit: desc("mcp_audit_records_total", "Records written to the MCP audit file, refused calls included."),
		mcpCalls: desc("mcp_calls_total", "MCP tools/call by tool and how it ended (ok, tool_error, refused, cancelled); tool \"unknown\" for a name no loaded tool has.", "tool", "outcome"),

		connsOpen:       desc("http_connections", "Connections the HTTP listeners (MCP, status page, /metrics) hold open now."),
		connsMax:        desc("http_connections_limit", "Connections the HTTP listeners may hold open together (from the memory budget)."),
		connsRefused:    desc("http_connections_refused_total", "Connections answered 503 and closed at accept, by cap (per_address, global).", "cap"),
		connsClosedIdle: desc("http_connections_closed_idle_total", "Idle connections closed to make room for a new one at the global cap."),

		expSent:        desc("exporter_sent_total", "Messages an exporter delivered.", "exporter"),
		expSentBytes:   desc("exporter_sent_bytes_total", "Bytes an exporter delivered.", "exporter"),
		expDropped:     desc("exporter_dropped_total", "Messages an exporter dropped, by cause.", "exporter", "cause"),
		expQueued:      desc("exporter_queue_items", "Messages waiting in an exporter's queue.", "exporter"),
		expQueuedBytes: desc("exporter_queue_bytes", "Bytes waiting in an exporter's queue.", "exporter"),
		expUp:          desc("exporter_connected", "1 while an exporter has its collector or broker.", "exporter"),
	}}
}

// collect adds every series the sources have now to e.
func (c *collector) collect(e *exposition) {
	counter := func(d *metricDesc, v uint64, labels ...string) {
		e.add(d, typeCounter, float64(v), labels...)
	}
	gauge := func(d *metricDesc, v float64, labels ...string) {
		e.add(d, typeGauge, v, labels...)
	}
	restarts := map[string]uint64{}
	if c.s.CAN != nil {
		now := c.s.Now()
		for _, p := range c.s.CAN.Ports() {
			if l := p.Status().Link; l != nil && l.Restarts != nil {
				restarts[p.Name()] = *l.Restarts
			}
			if v, ok := lastSecond(p.Seconds(), now); ok {
				gauge(c.d.busLoad, v, p.Name())
			}
		}
	}
	if c.s.Ports != nil {
		for _, p := range c.s.Ports.Snapshot() {
			counter(c.d.portFrames, p.Frames, p.Name, p.Kind)
			counter(c.d.portBytes, p.Bytes, p.Name, p.Kind)
			// Every cause the port can count, at 0 until it happens, and
			// any other it counted.
			for cause, n := range withZeros(p.Drops, p.DropCauses) {
				counter(c.d.portDrops, n, p.Name, cause)
			}
			for reason, n := range withZeros(p.Errors, p.ErrorReasons) {
				counter(c.d.portErrors, n, p.Name, reason)
			}
			for _, s := range portStates {
				gauge(c.d.portState, bool01(p.State == s), p.Name, s)
			}
			if p.Live {
				// The supervisor's restarts (a driver's reopen is one of
				// them) and the CAN controller's bus-off restarts.
				counter(c.d.portRestarts, p.Restarts+restarts[p.Name], p.Name)
			}
			gauge(c.d.portLive, bool01(p.Live), p.Name)
			gauge(c.d.storeItems, float64(p.Store.Items), p.Name)
			gauge(c.d.storeBytes, float64(p.Store.Bytes), p.Name)
			gauge(c.d.storeLimitItems, float64(p.Store.MaxItems), p.Name)
			gauge(c.d.storeLimitBytes, float64(p.Store.MaxBytes), p.Name)
			counter(c.d.storeEvictions, p.Store.Evicted, p.Name)
			counter(c.d.storeOversize, p.Store.Oversize, p.Name)
		}
		gauge(c.d.armed, bool01(c.s.Ports.Arm().On))
	}
	if c.s.Recorder != nil {
		r := c.s.Recorder.Status()
		for _, s := range recorderStates {
			gauge(c.d.recState, bool01(r.State == s), s)
		}
		counter(c.d.recGaps, uint64(r.GapsTotal))
		counter(c.d.recWriteErrors, r.WriteErrors)
		gauge(c.d.recUsed, float64(r.Bytes))
		gauge(c.d.recQuota, float64(r.QuotaBytes))
		if r.FreeBytes != nil {
			gauge(c.d.recFree, float64(*r.FreeBytes))
		}
		if r.Oldest != nil {
			gauge(c.d.recOldest, float64(r.Oldest.UnixNano())/1e9)
		}
	}
	if c.s.SIP != nil {
		st := c.s.SIP.Snapshot().Stats
		gauge(c.d.sipDialogs, float64(st.Dialogs))
		counter(c.d.sipDialogsEvicted, st.DialogsEvicted)
		counter(c.d.sipMessages, st.Messages)
		counter(c.d.sipMessagesEvicted, st.MessagesEvicted)
	}
	if c.s.Transmit != nil {
		st := c.s.Transmit.Status(transmit.Owner{})
		gauge(c.d.plansStored, float64(st.Plans))
		counter(c.d.auditFailures, st.AuditFailures)
	}
	if c.s.Outcomes != nil {
		events, gates := c.s.Outcomes.counts()
		for _, o := range attemptOutcomes {
			counter(c.d.attempts, events[o], o)
		}
		for g, n := range gates {
			counter(c.d.refusals, n, g)
		}
		counter(c.d.plans, events[transmit.EventPlanned])
		counter(c.d.modeErrors, events[transmit.EventModeError])
	}
	if c.s.MCP != nil {
		counter(c.d.mcpAudit, c.s.MCP.AuditRecords())
		for _, tc := range c.s.MCP.ToolCalls() {
			counter(c.d.mcpCalls, tc.Calls, tc.Tool, tc.Outcome)
		}
	}
	if c.s.Rules != nil {
		for _, v := range c.s.Rules.Verdicts() {
			gauge(c.d.ruleState, bool01(v.State == rules.StateFiring), v.Rule.Name, v.Rule.Severity)
			if v.HasValue {
				gauge(c.d.ruleValue, v.Value, v.Rule.Name)
			}
			counter(c.d.ruleTransitions, v.Transitions, v.Rule.Name)
		}
	}
	if c.s.Conns != nil {
		st := c.s.Conns.ConnStats()
		gauge(c.d.connsOpen, float64(st.Open))
		gauge(c.d.connsMax, float64(st.Max))
		counter(c.d.connsRefused, st.RefusedPerAddress, "per_address")
		counter(c.d.connsRefused, st.RefusedGlobal, "global")
		counter(c.d.connsClosedIdle, st.ClosedIdle)
	}
	for _, e := range c.s.Exporters {
		st := e.ExporterStats()
		counter(c.d.expSent, st.Sent, st.Name)
		counter(c.d.expSentBytes, st.SentBytes, st.Name)
		for cause, n := range st.Dropped {
			counter(c.d.expDropped, n, st.Name, cause)
		}
		gauge(c.d.expQueued, float64(st.Queued), st.Name)
		gauge(c.d.expQueuedBytes, float64(st.QueuedBytes), st.Name)
		gauge(c.d.expUp, bool01(st.Connected), st.Name)
	}
}

// lastSecond is the load of the newest second that has ended by now; the
// second still filling would read low.
func lastSecond(secs []canbus.Second, now time.Time) (float64, bool) {
	for i := len(secs) - 1; i >= 0 && i >= len(secs)-2; i-- {
		if !secs[i].Start.Add(time.Second).After(now) {
			return secs[i].Load, true
		}
	}
	return 0, false
}

// withZeros is counts with every one of names not in it at 0.
func withZeros(counts map[string]uint64, names []string) map[string]uint64 {
	out := maps.Clone(counts)
	if out == nil {
		out = map[string]uint64{}
	}
	for _, n := range names {
		out[n] += 0
	}
	return out
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
