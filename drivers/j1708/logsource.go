package j1708

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"

	"github.com/gopacket/gopacket/layers"
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

// Run reads the whole file; a malformed line is logged with its number,
// counted and skipped.
func (s *LogSource) Run(ctx context.Context, out *capture.Handoff) error {
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

func (s *LogSource) run(ctx context.Context, out *capture.Handoff) error {
	f, err := os.Open(s.path)
	if err != nil {
		s.counters.Error("open")
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, maxLogLine), maxLogLine)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		l, err := wire.ParseJ1708Line(sc.Bytes())
		if err != nil {
			s.counters.Error("malformed_line")
			s.log.Warn("skipping malformed J1708 log line", "file", s.path, "line", n, "err", err)
			continue
		}
		var link layers.LinkType = wire.LinkJ1708
		if l.J2497 {
			link = wire.LinkJ2497
		}
		if err := out.Put(ctx, capture.Frame{Time: l.Time, Link: link, Data: l.Data}); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		s.counters.Error("read")
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}
