package pcapfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"fieldtap/drivers/capture"
)

// Source replays a capture file as a finite, read-only port. Frames are
// handed off with back-pressure: reading a file never drops a packet.
type Source struct {
	name, path string
	counters   capture.Counters
}

var _ capture.Source = (*Source)(nil)

// New returns a port named name that will read path when run.
func New(name, path string) *Source { return &Source{name: name, path: path} }

func (s *Source) Name() string         { return s.name }
func (s *Source) Kind() capture.Kind   { return capture.KindEthernet }
func (s *Source) Origin() string       { return "file:" + s.path }
func (s *Source) Live() bool           { return false }
func (s *Source) Stats() capture.Stats { return s.counters.Snapshot() }

// Run reads the whole file. A malformed or truncated file ends the port
// early: what was read before the fault stays delivered, and the error
// names the file and byte offset.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	err := s.run(ctx, out)
	switch {
	case err == nil:
		s.counters.Exhaust("")
	case errors.Is(err, context.Canceled):
		return nil
	default:
		s.counters.Exhaust(err.Error())
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
	rd, err := NewReader(f)
	if err != nil {
		s.counters.Error("format")
		return fmt.Errorf("%s: %w", s.path, err)
	}
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var fe *FormatError
			if errors.As(err, &fe) {
				s.counters.Error("format")
			} else {
				s.counters.Error("read")
			}
			return fmt.Errorf("%s: %w", s.path, err)
		}
		fr := capture.Frame{Time: rec.Time, Link: rec.Link, Data: slices.Clone(rec.Data), OrigLen: rec.OrigLen}
		if err := out.Put(ctx, fr); err != nil {
			return err
		}
	}
}
