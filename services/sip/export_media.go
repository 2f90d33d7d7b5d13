package sip

import (
	"context"
	"slices"
	"time"

	"fieldtap/drivers/wire"

	"fieldtap/services/netdecode"
)

// MediaDatagram is one datagram of a media flow, found as an export finds
// it (the frame rings, then the recorder): Flow indexes the flows given
// to ReadMedia; Payload is the UDP payload, the caller's to keep.
type MediaDatagram struct {
	Flow    int
	Time    time.Time
	Payload []byte
}

// MediaRead says what ReadMedia found and what it could not.
type MediaRead struct {
	Datagrams int
	// Trimmed counts frames on the flows' address pairs whose bytes were
	// cut short of what was on the wire (the recorder's
	// rtp_headers_only, or a snap length): their payload is not there.
	Trimmed int
	// Cut says maxDatagrams was reached; ScanCut/ScanCutAt are
	// MaxExportScanFrames', as in ExportResult.
	Cut       bool
	ScanCut   bool
	ScanCutAt *time.Time
}

// ReadMedia finds the datagrams of flows (rtp.Snapshot.Flows) where
// Export would find them and gives each to fn once, in no particular
// order, at most maxDatagrams. It writes nothing.
func (e *Exporter) ReadMedia(ctx context.Context, flows []MediaFlow, maxDatagrams int, fn func(MediaDatagram)) (MediaRead, error) {
	var res ExportResult
	var mr MediaRead
	ws := make([]window, 0, len(flows))
	for _, f := range flows {
		ws = append(ws, window{f.First, f.Last})
	}
	e.mu.Lock()
	rec := e.rec
	e.mu.Unlock()
	sc := newExportScan(map[string]int{}, flows, e.snapshots(), rec, &res)
	sc.dec = e.dec
	sc.media = func(i int, d *netdecode.Datagram) {
		if mr.Datagrams == maxDatagrams {
			mr.Cut = true
			return
		}
		mr.Datagrams++
		fn(MediaDatagram{Flow: i, Time: d.Time, Payload: slices.Clone(d.Payload)})
	}
	sc.trimmed = func(link wire.LinkType, data []byte, origLen int) {
		if len(data) >= origLen {
			return
		}
		l, ok := netdecode.Locate(link, data, e.dec.VXLANPorts)
		if ok && len(sc.byPair[addrPair{l.Src, l.Dst}]) > 0 {
			mr.Trimmed++
		}
	}
	if err := sc.run(ctx, mergeWindows(ws)); err != nil {
		return mr, err
	}
	mr.ScanCut, mr.ScanCutAt = res.ScanCut, res.ScanCutAt
	return mr, nil
}
