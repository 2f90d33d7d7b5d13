package sip

import (
	"errors"
	"fmt"
	"time"
)

// ErrNoDialog is SelectExport's answer for a Call-ID the snapshot does not
// hold (never seen, or evicted by the dialog bound).
var ErrNoDialog = errors.New("no dialog with this Call-ID in the store")

// ExportSelection is what one export_capture writes: the dialogs, oldest
// first, and how many matched before the bound.
type ExportSelection struct {
	Dialogs []*Dialog
	Matched int
}

// SelectExport picks the dialogs of one export: the dialog of callID, or
// (callID empty) the oldest maxDialogs dialogs match accepts.
func SelectExport(sn *Snapshot, callID string, match func(*Dialog) bool, maxDialogs int) (ExportSelection, error) {
	var sel ExportSelection
	if callID != "" {
		d := sn.Lookup(callID)
		if d == nil {
			return sel, fmt.Errorf("%w: %q", ErrNoDialog, callID)
		}
		sel.Dialogs, sel.Matched = []*Dialog{d}, 1
	} else {
		for _, d := range sn.Dialogs {
			if !match(d) {
				continue
			}
			sel.Matched++
			if len(sel.Dialogs) < maxDialogs {
				sel.Dialogs = append(sel.Dialogs, d)
			}
		}
	}
	return sel, nil
}

// Shortfalls says, in plain words, what the selection and the written
// file res do not hold. Every non-zero shortfall has its line.
func (sel ExportSelection) Shortfalls(res ExportResult) []string {
	var w []string
	if sel.Matched > len(sel.Dialogs) {
		w = append(w, fmt.Sprintf("%d dialogs matched; the file holds the oldest %d (max_dialogs)", sel.Matched, len(sel.Dialogs)))
	}
	if res.MessagesMissing > 0 || res.MessagesEvicted > 0 || res.MessagesShed > 0 {
		w = append(w, fmt.Sprintf("not in the file: %d messages whose frames neither the frame rings nor the recorder hold, %d messages evicted, %d past the per-dialog cap",
			res.MessagesMissing, res.MessagesEvicted, res.MessagesShed))
	}
	if res.MediaFramesMissing > 0 {
		w = append(w, fmt.Sprintf("%d RTP/RTCP datagrams counted on these calls are not in the file: their frames left the frame ring and the recorder no longer hold them, or they were not kept whole", res.MediaFramesMissing))
	}
	if res.ScanCut && res.ScanCutAt != nil {
		w = append(w, fmt.Sprintf("scan stopped at %d frames; frames captured from %s on were not examined: narrow the filter", MaxExportScanFrames, res.ScanCutAt.UTC().Format(time.RFC3339Nano)))
	}
	if res.Truncated {
		w = append(w, fmt.Sprintf("cut at %d frames or %d MiB; narrow the filter", MaxExportFrames, MaxExportBytes>>20))
	}
	return w
}
