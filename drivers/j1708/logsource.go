package j1708

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

// LogSource replays a J1708 text log as a finite port. Each message keeps
// its bytes as logged: a bad checksum is for the analyser to count.
type LogSource struct {
	name, path string
	log        *slog.Logger
	counters   capture.Counters
}

var _ capture.Source = (*LogSource)(nil)

// NewLogSource returns a port named name that reads path when run.
func NewLogSource(name, path string, log *slog.Logger) *LogSource {
	return &LogSource{name: name, path: path, log: log}
}

func (s *LogSource) Name() string         { return s.name }
func (s *LogSource) Kind() capture.Kind   { return capture.KindJ1708 }
func (s *LogSource) Origin() string       { return "file:" + s.path }
func (s *LogSource) Live() bool           { return false }
func (s *LogSource) Stats() capture.Stats { return s.counters.Snapshot() }

// Run reads the whole file; a malformed or overlong line is logged with
// its number, counted and skipped.
func (s *LogSource) Run(ctx context.Context, out *capture.Handoff) error {
	return s.counters.Ended(s.run(ctx, out))
}

func (s *LogSource) run(ctx context.Context, out *capture.Handoff) error {
	f, err := os.Open(s.path)
	if err != nil {
		s.counters.Error("open")
		return err
	}
	defer f.Close()
	err = ReadLog(f, func(_ int, l wire.J1708Line) error {
		var link wire.LinkType = wire.LinkJ1708
		if l.J2497 {
			link = wire.LinkJ2497
		}
		return out.Put(ctx, capture.Frame{Time: l.Time, Link: link, Data: l.Data})
	}, func(n int, reason string, err error) {
		s.counters.Error(reason)
		if reason == ReasonOverlong {
			s.log.Warn("skipping overlong J1708 log line", "file", s.path, "line", n, "max_bytes", maxLogLine)
			return
		}
		s.log.Warn("skipping malformed J1708 log line", "file", s.path, "line", n, "err", err)
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		s.counters.Error("read")
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return err
}

// Reasons ReadLog gives a skipped line.
const (
	ReasonMalformed = "malformed_line"
	ReasonOverlong  = "overlong_line"
)

// ReadLog reads a J1708 text log from r, handing each message to msg
// with its line number (Data is the message's own copy). A malformed or
// overlong line is given to bad with its reason and skipped, so one bad
// line never ends the file; blank lines are skipped. It returns msg's
// first error, or a read error.
func ReadLog(r io.Reader, msg func(n int, l wire.J1708Line) error, bad func(n int, reason string, err error)) error {
	return capture.ReadLines(r, maxLogLine, func(n int, line []byte, overlong bool) error {
		if overlong {
			bad(n, ReasonOverlong, nil)
			return nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		l, err := wire.ParseJ1708Line(line)
		if err != nil {
			bad(n, ReasonMalformed, err)
			return nil
		}
		return msg(n, l)
	})
}
