package daemon

import (
	"fmt"
	"unsafe"

	"fieldtap/drivers/canfiles"
	"fieldtap/drivers/canlog"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/j1708"
	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
	"fieldtap/firmware/config"
	"fieldtap/mcp/front"
	"fieldtap/services/budget"
	"fieldtap/services/canbus"
	"fieldtap/services/heapsize"
	"fieldtap/services/isotp"
	"fieldtap/services/j1587"
	"fieldtap/services/j1939"
	"fieldtap/services/recorder"
)

// Weights of the stores that share what the memory budget's store pool
// has left once fixed costs are taken (services/budget). With every kind
// of port present, Ethernet's stores get 36 of 52 parts: SIP is what an
// agent asks about most and its messages are the largest items kept.
const (
	weightFrames        = 12 // per Ethernet port: raw frames for export_capture
	weightSIPDialogs    = 8  // dialog summaries: list_dialogs and the SIP statistics
	weightSIPMessages   = 12 // raw messages: ladders, search, export
	weightRTP           = 4  // media streams with their interval history
	weightCANFrames     = 8  // per CAN port
	weightJ1939Samples  = 3  // SPN time series
	weightJ1939Sessions = 1  // ended TP sessions (small records)
	weightJ1708         = 4  // per J1708 port
)

// Largest frames a driver that allocates frame by frame can hand off, for
// sources that do not report their footprint (capture.Sizer).
const (
	maxEthernetFrame = 1518 + 4 // a full-size frame with an 802.1Q tag
	maxJ1708Frame    = wire.MaxJ1708Message
)

// Why strings, as the refusal names them.
const (
	whyHandoff  = "store.handoff_depth frames in flight"
	whyTables   = "tables bounded by the protocol"
	whyIdle     = "no port of this kind: kept at the minimum"
	whyBytes    = "store.bytes_per_port"
	whyKernel   = "AF_PACKET ring"
	whyUDS      = "UDS transactions and incomplete transfers, bounded by count"
	whyRecorder = "the recorder's pending and write buffers"
	whyConns    = "open HTTP connections (MCP endpoint, status page, /metrics), each ConnBytes, and the piece buffers of the file PUTs served at once"
	frameHeader = int(unsafe.Sizeof(capture.Frame{}))
)

// planBudget divides the configured memory budget among the stores the
// sources need. It refuses, naming every figure, a configuration whose
// fixed bounds do not fit.
func planBudget(cfg config.Config, sources []capture.Source) (budget.Plan, error) {
	opened, err := openedCaptures(cfg, sources)
	if err != nil {
		return budget.Plan{}, err
	}
	return planWith(cfg, sources, opened)
}

// openedCaptures is how many open_capture ports the plan reserves:
// store.opened_captures as configured (a plan it does not fit refuses),
// or the board profile's figure lowered until the plan fits, so a
// profile's default never stops a box its ports alone fit.
func openedCaptures(cfg config.Config, sources []capture.Source) (int, error) {
	n, explicit, err := cfg.OpenedCapturesFor()
	if err != nil || explicit {
		return n, err
	}
	for ; n > 0; n-- {
		if _, err := planWith(cfg, sources, n); err == nil {
			break
		}
	}
	return n, nil
}

// planWith plans the sources and opened open_capture ports.
func planWith(cfg config.Config, sources []capture.Source, opened int) (budget.Plan, error) {
	total, from, err := cfg.Budget()
	if err != nil {
		return budget.Plan{}, err
	}
	var reqs []budget.Request
	kinds := map[capture.Kind]int{}
	for _, src := range sources {
		kinds[src.Kind()]++
		reqs = append(reqs, inFlightRequests(cfg.Store, src.Name(), footprint(src))...)
		reqs = append(reqs, kindRequests(cfg.Store, src.Name(), src.Kind())...)
	}
	// Each open_capture slot is a port of every kind under the name it
	// will take, its hand-off the largest a capture file's reader holds.
	for i := range opened {
		name := fileName(len(cfg.Sources) + i)
		reqs = append(reqs, inFlightRequests(cfg.Store, name, fileFootprint(name))...)
		for _, kind := range []capture.Kind{capture.KindEthernet, capture.KindCAN, capture.KindJ1708} {
			kinds[kind]++
			reqs = append(reqs, kindRequests(cfg.Store, name, kind)...)
		}
	}
	// Stores several ports feed; kept at the minimum when no port does,
	// so the tools that read them still answer (empty).
	shared := func(kind capture.Kind, stores ...budget.Request) {
		for _, r := range stores {
			if kinds[kind] == 0 {
				r.Weight, r.Fixed, r.Why = 0, budget.MinShare, whyIdle
			}
			reqs = append(reqs, r)
		}
	}
	shared(capture.KindEthernet,
		budget.Request{Store: budget.SIPDialogs, Weight: weightSIPDialogs},
		budget.Request{Store: budget.SIPMessages, Weight: weightSIPMessages},
		budget.Request{Store: budget.RTP, Weight: weightRTP})
	shared(capture.KindCAN,
		budget.Request{Store: budget.J1939Samples, Weight: weightJ1939Samples},
		budget.Request{Store: budget.J1939Sessions, Weight: weightJ1939Sessions})
	uds := budget.Request{Store: budget.UDS, Fixed: isotp.StoreBytes(isotp.Limits{}), Why: whyUDS}
	if kinds[capture.KindCAN] == 0 {
		uds.Fixed, uds.Why = budget.MinShare, whyIdle
		reqs = append(reqs, budget.Request{Store: budget.CANFrames, Fixed: budget.MinShare, Why: whyIdle})
	}
	reqs = append(reqs, uds)
	if pend := recorderBuffers(cfg.Recorder, total); pend > 0 {
		reqs = append(reqs, budget.Request{Store: budget.Recorder, Fixed: pend, Why: whyRecorder})
	}
	if kinds[capture.KindJ1708] == 0 {
		reqs = append(reqs, budget.Request{Store: budget.J1708Messages, Fixed: budget.MinShare, Why: whyIdle})
	}
	// Connections are memory too: the HTTP listeners share one pool, its
	// bound paid for here (mcp/front's ConnPool), with the pieces the
	// file PUTs hold.
	if cfg.MCP.Transport == "http" || len(cfg.Status.Listen) > 0 {
		reqs = append(reqs, budget.Request{Store: budget.Connections, Fixed: front.DefaultMaxConns*front.ConnBytes + front.PutBufferBytes, Why: whyConns})
	}
	plan, err := budget.Divide(total, from, reqs)
	if err != nil {
		return budget.Plan{}, fmt.Errorf("memory budget: %w", err)
	}
	return plan, nil
}

// inFlightRequests are what port name holds for frames in flight: its
// hand-off and, for a socket, its kernel ring.
func inFlightRequests(st config.Store, name string, fp capture.Footprint) []budget.Request {
	reqs := []budget.Request{{Store: budget.Handoff, Port: name, Fixed: handoffBytes(fp, st.HandoffDepth), Why: whyHandoff}}
	if fp.Kernel > 0 {
		reqs = append(reqs, budget.Request{Store: budget.KernelRing, Port: name, Fixed: fp.Kernel, Why: whyKernel})
	}
	return reqs
}

// kindRequests are the shares a port of kind needs under name: its own
// frames and the tables its protocol bounds.
func kindRequests(st config.Store, name string, kind capture.Kind) []budget.Request {
	var reqs []budget.Request
	switch kind {
	case capture.KindEthernet:
		if st.BytesPerPort > 0 {
			reqs = append(reqs, budget.Request{Store: budget.Frames, Port: name, Fixed: st.BytesPerPort, Why: whyBytes})
		} else {
			reqs = append(reqs, budget.Request{Store: budget.Frames, Port: name, Weight: weightFrames})
		}
	case capture.KindCAN:
		reqs = append(reqs,
			budget.Request{Store: budget.CANFrames, Port: name, Weight: weightCANFrames},
			budget.Request{Store: budget.CANTables, Port: name, Fixed: canbus.TableBytes(), Why: whyTables},
			budget.Request{Store: budget.J1939Tables, Port: name, Fixed: j1939.TableBytes(), Why: whyTables},
			budget.Request{Store: budget.UDSChannels, Port: name, Fixed: isotp.PortBytes(0), Why: whyTables})
	case capture.KindJ1708:
		reqs = append(reqs,
			budget.Request{Store: budget.J1708Messages, Port: name, Weight: weightJ1708},
			budget.Request{Store: budget.J1708Tables, Port: name, Fixed: j1587.TableBytes(), Why: whyTables})
	}
	return reqs
}

// fileFootprint is the largest any capture file's reader holds in
// flight, for a port whose file is not chosen yet.
func fileFootprint(name string) capture.Footprint {
	var most capture.Footprint
	for _, src := range []capture.Source{pcapfile.New(name, ""), canlog.New(name, "", nil), canfiles.New(name, "", canfiles.BLF, nil), j1708.NewLogSource(name, "", nil)} {
		fp := footprint(src)
		if handoffBytes(fp, capture.DefaultHandoffDepth) > handoffBytes(most, capture.DefaultHandoffDepth) {
			most = fp
		}
	}
	return most
}

// footprint is what src holds for frames in flight: its own report, or
// frames allocated one by one, each as large as its kind allows.
func footprint(src capture.Source) capture.Footprint {
	if s, ok := src.(capture.Sizer); ok {
		return s.Footprint()
	}
	switch src.Kind() {
	case capture.KindCAN:
		return capture.Footprint{PerFrame: wire.CANFrameBytes}
	case capture.KindJ1708:
		return capture.Footprint{PerFrame: maxJ1708Frame}
	}
	return capture.Footprint{PerFrame: maxEthernetFrame}
}

// handoffBytes is a port's hand-off at its fullest: depth frames, each
// with its data when the source allocates it per frame, plus the source's
// own heap buffers.
func handoffBytes(fp capture.Footprint, depth int) int64 {
	if depth < 1 {
		depth = capture.DefaultHandoffDepth
	}
	per := frameHeader
	if fp.PerFrame > 0 {
		per += heapsize.Bytes(fp.PerFrame)
	}
	// The queue's frame lists (two recycled tails of up to depth frames).
	return fp.Heap + int64(depth)*int64(per) + int64(heapsize.Pointers(depth*frameHeader))
}

// shareOf returns store's bound for port ("" for shared), which the plan
// always has for the stores planBudget asked for.
func shareOf(p budget.Plan, store, port string) int64 {
	n, _ := p.Share(store, port)
	return n
}

// recorderBuffers is what the recorder holds in the heap: frames encoded
// and waiting, and the buffer being written, each up to recorderPending;
// 0 when the recorder is off.
func recorderBuffers(c config.Recorder, total int64) int64 {
	if !c.Enabled {
		return 0
	}
	return 2 * int64(recorderPending(total))
}

// recorderPending bounds the recorder's frames waiting for a write: a
// 64th of the budget, so a 128 MiB board with every kind of port and the
// AF_PACKET ring still fits, within the recorder's own limits. What a
// slow disk leaves over that is a counted recording gap.
func recorderPending(total int64) int {
	return int(min(max(total/64, recorder.MinPendingBytes), recorder.DefaultMaxPendingBytes))
}
