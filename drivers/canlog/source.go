package canlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
)

// Source replays a candump file (-l or pretty) as a finite CAN port.
type Source struct {
	name, path string
	log        *slog.Logger
	counters   capture.Counters
}

var _ capture.Source = (*Source)(nil)

// New returns a port named name that reads path when run. Malformed lines
// are logged to log with their line number, counted, and skipped.
func New(name, path string, log *slog.Logger) *Source {
	return &Source{name: name, path: path, log: log}
}

func (s *Source) Name() string         { return s.name }
func (s *Source) Kind() capture.Kind   { return capture.KindCAN }
func (s *Source) Origin() string       { return "file:" + s.path }
func (s *Source) Live() bool           { return false }
func (s *Source) Stats() capture.Stats { return s.counters.Snapshot() }

// Run reads the whole file; a bad line does not stop it.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	err := s.run(ctx, out)
	switch {
	case errors.Is(err, context.Canceled):
		return nil
	case err != nil:
		s.counters.Exhaust(err.Error())
	default:
		s.counters.Exhaust("")
	}
	return err
}

func (s *Source) run(ctx context.Context, out *capture.Handoff) error {
	f, err := os.Open(s.path)
	if err != nil {
		s.counters.Error("open")
		return err
	}
	defer f.Close()
	err = ReadFile(f, func(_ int, r *wire.CandumpRecord) error {
		frame, err := wire.EncodeCAN(r.ID, r.Payload())
		if err != nil { // cannot happen: DecodeCandump bounds the length
			s.counters.Error("malformed_line")
			return nil
		}
		return out.Put(ctx, capture.Frame{Time: r.Time, Link: wire.LinkCANSocketCAN, Data: frame})
	}, func(n int, reason string, err error) {
		s.counters.Error(reason)
		if reason == ReasonOverlong {
			s.log.Warn("skipping overlong candump line", "file", s.path, "line", n, "max_bytes", maxLine)
			return
		}
		s.log.Warn("skipping malformed candump line", "file", s.path, "line", n, "err", err)
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		s.counters.Error("read")
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return err
}

// Reasons ReadFile gives a skipped line.
const (
	ReasonMalformed = "malformed_line"
	ReasonOverlong  = "overlong_line"
)

// ReadFile reads a candump file (-l or pretty lines, blank lines
// skipped) from r, handing each frame to frame with its line number (the
// record is reused: copy what you keep). A malformed or overlong line is
// given to bad with its reason and skipped: one bad line never ends the
// file. It returns frame's first error, or a read error.
func ReadFile(r io.Reader, frame func(n int, rec *wire.CandumpRecord) error, bad func(n int, reason string, err error)) error {
	var rec wire.CandumpRecord
	return capture.ReadLines(r, maxLine, func(n int, line []byte, overlong bool) error {
		if overlong {
			bad(n, ReasonOverlong, nil)
			return nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		if err := wire.DecodeCandump(line, &rec); err != nil {
			bad(n, ReasonMalformed, err)
			return nil
		}
		return frame(n, &rec)
	})
}
