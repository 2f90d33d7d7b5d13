package daemon

import (
	"context"
	"log/slog"
	"time"

	"fieldtap/board"
	"fieldtap/services/marks"
	"fieldtap/services/recorder"
	"fieldtap/services/transmit"
)

// journaledMarks is the marks store over the recorder's marks.json: the
// marks of earlier runs come back, and every new one is journaled.
func journaledMarks(rec *recorder.Recorder, log *slog.Logger) *marks.Store {
	old, _ := rec.Marks()
	earlier := make([]marks.Mark, len(old))
	for i, m := range old {
		earlier[i] = marks.Mark{At: m.At, Label: m.Label, Source: m.Source}
	}
	return marks.New(func(m marks.Mark) error {
		err := rec.Mark(recorder.Mark{At: m.At, Label: m.Label, Source: m.Source})
		if err != nil {
			log.Warn("mark not journaled by the recorder", "at", m.At, "err", err)
		}
		return err
	}, earlier)
}

// watchMarks makes every press of the confirm button made while no plan
// waits for it a mark, until ctx ends. A button that is not the board's
// ConfirmButton (none here) marks nothing.
func watchMarks(ctx context.Context, btn transmit.Button, ms *marks.Store, log *slog.Logger) {
	cb, ok := btn.(*board.ConfirmButton)
	if !ok {
		return
	}
	cb.WatchIdle(ctx, func(at time.Time) {
		m, _ := ms.Add(at, "button", marks.SourceButton) // a fixed label is valid
		log.Info("mark", "seq", m.Seq, "at", m.At, "source", m.Source)
	})
}
