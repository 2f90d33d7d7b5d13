package canlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"
	"unsafe"

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
	return s.counters.Ended(s.run(ctx, out))
}

// Batching: a file's frames are handed off batchFrames at a time, their
// bytes laid out in one buffer per batch, and batchesInFlight buffers are
// recycled, so reading a log allocates nothing per frame.
const (
	batchFrames     = 1024
	batchesInFlight = 4
)

// Footprint is what a candump file port holds in flight: its batch
// buffers and their frame lists.
func (s *Source) Footprint() capture.Footprint {
	return capture.Footprint{Heap: batchesInFlight * batchFrames * int64(wire.CANFrameBytes+unsafe.Sizeof(capture.Frame{}))}
}

var _ capture.Sizer = (*Source)(nil)

func (s *Source) run(ctx context.Context, out *capture.Handoff) error {
	f, err := os.Open(s.path)
	if err != nil {
		s.counters.Error("open")
		return err
	}
	defer f.Close()
	b := newBatcher(ctx, out)
	err = ReadFile(f, func(_ int, r *wire.CandumpRecord) error {
		return b.add(r.Time, r.ID, r.Flags, r.Payload(), func() { s.counters.Error(ReasonMalformed) })
	}, func(n int, reason string, err error) {
		s.counters.Error(reason)
		if reason == ReasonOverlong {
			s.log.Warn("skipping overlong candump line", "file", s.path, "line", n, "max_bytes", maxLine)
			return
		}
		s.log.Warn("skipping malformed candump line", "file", s.path, "line", n, "err", err)
	})
	return b.finish(err, s.path, &s.counters)
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
		// A -l line starts with its timestamp: only others need trimming.
		if line[0] != '(' && len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		if err := wire.DecodeCandump(line, &rec); err != nil {
			bad(n, ReasonMalformed, err)
			return nil
		}
		return frame(n, &rec)
	})
}

// batcher lays frames out in recycled buffers and hands them off a batch
// at a time.
type batcher struct {
	ctx  context.Context
	out  *capture.Handoff
	free chan *batchBuf
	made int
	cur  *batchBuf
}

type batchBuf struct {
	data   []byte
	frames []capture.Frame
}

func newBatcher(ctx context.Context, out *capture.Handoff) *batcher {
	return &batcher{ctx: ctx, out: out, free: make(chan *batchBuf, batchesInFlight)}
}

func (b *batcher) add(t time.Time, id uint32, flags uint8, payload []byte, bad func()) error {
	// A batch's buffer holds batchFrames classic frames; CAN FD frames,
	// up to 72 bytes, end it early when the next frame does not fit, so
	// the buffer never grows past what Footprint says.
	const header = wire.CANFrameBytes - wire.MaxCANData
	if c := b.cur; c != nil && cap(c.data)-len(c.data) < header+len(payload) {
		if err := b.flush(); err != nil {
			return err
		}
	}
	if b.cur == nil {
		select {
		case b.cur = <-b.free:
		default:
			if b.made < batchesInFlight {
				b.made++
				b.cur = &batchBuf{data: make([]byte, 0, batchFrames*wire.CANFrameBytes), frames: make([]capture.Frame, 0, batchFrames)}
				break
			}
			select {
			case b.cur = <-b.free:
			case <-b.ctx.Done():
				return b.ctx.Err()
			}
		}
	}
	c := b.cur
	start := len(c.data)
	data, err := wire.AppendCANFrame(c.data, id, flags, payload)
	if err != nil {
		bad()
		return nil
	}
	c.data = data
	// Field by field in place: a Frame built on the stack and appended
	// stalls on the copy (narrow stores do not forward to wide loads).
	c.frames = c.frames[:len(c.frames)+1]
	f := &c.frames[len(c.frames)-1]
	f.Time, f.Link, f.Data, f.OrigLen = t, wire.LinkCANSocketCAN, data[start:len(data):len(data)], 0
	if len(c.frames) == batchFrames {
		return b.flush()
	}
	return nil
}

// finish ends a file's read with what reading it returned: what was read
// before an error is still handed off, and an error other than the
// context's is counted as a "read" error and named with the file's path.
func (b *batcher) finish(err error, path string, counters *capture.Counters) error {
	if err == nil {
		return b.flush()
	}
	if !errors.Is(err, context.Canceled) {
		counters.Error("read")
		err = fmt.Errorf("%s: %w", path, err)
	}
	// What was read before the error is still delivered.
	if ferr := b.flush(); ferr != nil {
		return ferr
	}
	return err
}

// flush hands the current batch off; its buffer comes back on release.
func (b *batcher) flush() error {
	c := b.cur
	b.cur = nil
	if c == nil || len(c.frames) == 0 {
		return nil
	}
	return b.out.PutBatch(b.ctx, capture.NewBatch(c.frames, func() {
		c.data, c.frames = c.data[:0], c.frames[:0]
		b.free <- c
	}))
}
