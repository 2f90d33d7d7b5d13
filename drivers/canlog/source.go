package canlog

import (
	"bufio"
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
	br := bufio.NewReaderSize(f, maxLine)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// An overlong line is skipped, not fatal: drain it to its newline.
			s.counters.Error("overlong_line")
			s.log.Warn("skipping overlong candump line", "file", s.path, "line", n, "max_bytes", maxLine)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil {
				continue
			}
			line = nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			s.counters.Error("read")
			return fmt.Errorf("%s: line %d: %w", s.path, n, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := s.emit(ctx, out, line, n); ferr != nil {
				return ferr
			}
		}
		if err != nil { // io.EOF
			return nil
		}
	}
}

// emit parses one line and hands its frame on; a malformed line is counted
// and logged with its number.
func (s *Source) emit(ctx context.Context, out *capture.Handoff, line []byte, n int) error {
	var r wire.CandumpRecord
	if err := wire.DecodeCandump(line, &r); err != nil {
		s.counters.Error("malformed_line")
		s.log.Warn("skipping malformed candump line", "file", s.path, "line", n, "err", err)
		return nil
	}
	frame, err := wire.EncodeCAN(r.ID, r.Payload())
	if err != nil {
		s.counters.Error("malformed_line")
		return nil
	}
	return out.Put(ctx, capture.Frame{Time: r.Time, Link: wire.LinkCANSocketCAN, Data: frame})
}
