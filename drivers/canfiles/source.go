package canfiles

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"fieldtap/drivers/canlog"
	"fieldtap/drivers/capture"
)

// Source replays a vendor CAN log as a finite CAN port. Every channel of
// the file feeds this one port, as every interface of a candump log does;
// the channel numbers are not kept.
type Source struct {
	name, path string
	format     Format
	log        *slog.Logger
	counters   capture.Counters
}

var _ capture.Source = (*Source)(nil)

// New returns a port named name that reads path, a file of format, when
// run. Records not read are counted by Reason; malformed ones are logged
// with their place in the file.
func New(name, path string, format Format, log *slog.Logger) *Source {
	return &Source{name: name, path: path, format: format, log: log}
}

func (s *Source) Name() string         { return s.name }
func (s *Source) Kind() capture.Kind   { return capture.KindCAN }
func (s *Source) Origin() string       { return "file:" + s.path }
func (s *Source) Live() bool           { return false }
func (s *Source) Stats() capture.Stats { return s.counters.Snapshot() }

// Footprint is the batches in flight and, for BLF, the container being
// decompressed, the object stream it continues and the object read.
func (s *Source) Footprint() capture.Footprint {
	fp := canlog.BatchFootprint()
	if s.format == BLF {
		fp.Heap += 3*maxContainer + 64<<10 // and zlib's window
	}
	return fp
}

var _ capture.Sizer = (*Source)(nil)

// Run reads the whole file; a bad record does not stop it.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	return s.counters.Ended(s.run(ctx, out))
}

// Reader is one format's reader.
type Reader func(r io.Reader, frame func(*Frame) error, bad Bad) error

// ReaderOf is the reader of format, nil for an unknown one.
func ReaderOf(format Format) Reader {
	switch format {
	case ASC:
		return ReadASC
	case BLF:
		return ReadBLF
	case TRC:
		return ReadTRC
	case SavvyCSV:
		return ReadSavvyCSV
	}
	return nil
}

func (s *Source) run(ctx context.Context, out *capture.Handoff) error {
	read := ReaderOf(s.format)
	if read == nil {
		s.counters.Error("open")
		return fmt.Errorf("%s: no reader for format %q", s.path, s.format)
	}
	f, err := os.Open(s.path)
	if err != nil {
		s.counters.Error("open")
		return err
	}
	defer f.Close()
	b := canlog.NewBatcher(ctx, out)
	err = read(f, func(fr *Frame) error {
		return b.Add(fr.Time, fr.ID, fr.Flags, fr.Data, func() { s.counters.Error(ReasonMalformed) })
	}, func(at int64, reason string, err error) {
		s.counters.Error(reason)
		switch reason {
		case ReasonMalformed, ReasonContainer:
			s.log.Warn("skipping unreadable record", "file", s.path, "format", s.format, "at", at, "reason", reason, "err", err)
		case ReasonOverlong:
			s.log.Warn("skipping overlong line", "file", s.path, "line", at, "max_bytes", maxLine)
		}
	})
	return b.Finish(err, s.path, &s.counters)
}
