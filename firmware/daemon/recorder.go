package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"sync"

	"fieldtap/drivers/capture"
	"fieldtap/firmware/config"
	"fieldtap/services/canbus"
	"fieldtap/services/evidence"
	"fieldtap/services/j1939"
	"fieldtap/services/recorder"
	"fieldtap/services/sip"
)

// recording is the daemon's recorder, or why there is none.
type recording struct {
	rec         *recorder.Recorder
	why         string // why rec is nil
	headersOnly bool   // recorder.rtp_headers_only
}

// openRecording opens and recovers the recorder before any port starts,
// its pending frames bounded by half its share of the budget (the other
// half is the buffer being written).
// A recorder that cannot open does not stop the box: it runs RAM-only
// and capture_status says why on every port.
func openRecording(c config.Recorder, vxlanPorts []uint16, pending int64, app string, log *slog.Logger) *recording {
	if !c.Enabled {
		return &recording{why: "recorder off (recorder.enabled is false; see docs/recorder.md)"}
	}
	o, err := c.Options(app)
	if err == nil {
		o.MaxPendingBytes = int(pending)
		o.VXLANPorts = vxlanPorts
		var rec *recorder.Recorder
		if rec, err = recorder.Open(o); err == nil {
			st := rec.Status()
			log.Info("recorder open", "dir", o.Dir, "segments", st.Segments, "bytes", st.Bytes,
				"unclean", st.Recovery.Unclean, "scanned", len(st.Recovery.Scanned), "trusted", st.Recovery.Trusted)
			if g := st.Recovery.Gap; g != nil {
				log.Info("recording gap", "reason", g.Reason, "from", g.From, "to", g.To, "cut_bytes", g.CutBytes)
			}
			return &recording{rec: rec, headersOnly: c.RTPHeadersOnly}
		}
	}
	log.Error("recorder not running: frames are kept in RAM only", "dir", c.Dir, "err", err)
	return &recording{why: "recorder not running: " + err.Error()}
}

// attach gives a port its recorder handle: live ports only, since a file
// is its own record (recording it would copy it, and refill it twice
// when the same --source opens again).
func (r *recording) attach(p *port, an *analysers) {
	switch {
	case r.rec == nil:
		p.recWhy = r.why
	case !p.src.Live():
		p.recWhy = "not recorded: a capture file is its own record"
	default:
		p.rec = r.rec.Port(p.src.Name())
		if r.headersOnly && p.src.Kind() == capture.KindEthernet {
			p.trim = func(f capture.Frame) int { return an.media.HeadersOnly(f.Link, f.Data) }
		}
	}
}

// refill gives the ports' analysers the newest recorded frames that fit
// budget, before the ports start: a store emptied by a restart answers
// with what the box saw before it. Frames of ports this run does not have
// are skipped and counted.
func (r *recording) refill(ctx context.Context, budget int64, ports []*port, log *slog.Logger) {
	if r.rec == nil {
		return
	}
	byName := map[string]*port{}
	for _, p := range ports {
		if p.rec != nil {
			byName[p.src.Name()] = p
		}
	}
	skipped := map[string]uint64{}
	rs, err := r.rec.Refill(ctx, budget, func(f *recorder.Frame) error {
		p := byName[f.Port]
		if p == nil {
			skipped[f.Port]++
			return nil
		}
		// Stores keep what they are given: the reader's buffer is reused.
		one := [1]capture.Frame{{Time: f.Time, Link: linkType(f.Link), Data: bytes.Clone(f.Data), OrigLen: f.OrigLen}}
		_ = p.consume(one[:]) // an undecodable frame was counted when it was live
		return nil
	})
	if err != nil {
		log.Error("refill from the recorder stopped", "err", err)
	}
	log.Info("refilled from the recorder", "frames", rs.Frames, "segments", rs.Segments, "bytes", rs.Bytes,
		"from", rs.From, "to", rs.To, "older_on_disk", rs.Older, "skipped_ports", skipped)
}

// run writes and syncs until ctx ends.
func (r *recording) run(ctx context.Context, wg *sync.WaitGroup) {
	if r.rec == nil {
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.rec.Run(ctx)
	}()
}

// close writes what is left and closes the open segment with its index:
// after a graceful stop nothing the ports delivered is missing. The
// caller checks there is a recorder.
func (r *recording) close(log *slog.Logger) error {
	if err := r.rec.Close(); err != nil {
		return err
	}
	st := r.rec.Status()
	log.Info("recorder closed", "segments", st.Segments, "bytes_written", st.BytesWritten, "syncs", st.Syncs)
	return nil
}

// refillBudget is the recorded bytes the start-up refill may read: what
// the recorded ports' own stores may hold, their shares of the memory
// budget; reading more would only be evicted again.
func refillBudget(ps []*port) int64 {
	var n int64
	for _, p := range ps {
		if p.rec != nil {
			n += p.stored().MaxBytes
		}
	}
	return n
}

// The recorder is the read side exports and evidence declare they need.
var (
	_ sip.Recorded          = (*recorder.Recorder)(nil)
	_ canbus.Recorded       = (*recorder.Recorder)(nil)
	_ evidence.Source       = (*recorder.Recorder)(nil)
	_ evidence.DialogSource = (*sip.Store)(nil)
	_ evidence.FaultSource  = (*j1939.Store)(nil)
)
