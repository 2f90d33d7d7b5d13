package pcapfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"

	"fieldtap/drivers/capture"
)

// Source replays a capture file as a finite, read-only port. Frames are
// handed off with back-pressure: reading a file never drops a packet.
type Source struct {
	name, path string
	counters   capture.Counters
	secrets    func(typ uint32, data []byte)
}

var _ capture.Source = (*Source)(nil)

// New returns a port named name that will read path when run.
func New(name, path string) *Source { return &Source{name: name, path: path} }

// OnSecrets hands the file's pcapng Decryption Secrets Blocks to fn as
// the file is read (Reader.OnSecrets); call it before Run. The frames
// after a block reach the analysers after fn has returned.
func (s *Source) OnSecrets(fn func(typ uint32, data []byte)) { s.secrets = fn }

func (s *Source) Name() string         { return s.name }
func (s *Source) Kind() capture.Kind   { return capture.KindEthernet }
func (s *Source) Origin() string       { return "file:" + s.path }
func (s *Source) Live() bool           { return false }
func (s *Source) Stats() capture.Stats { return s.counters.Snapshot() }

// Run reads the whole file. A malformed or truncated file ends the port
// early: what was read before the fault stays delivered, and the error
// names the file and byte offset.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	return s.counters.Ended(s.run(ctx, out))
}

// readChunks bounds the chunks in flight: one being read into while the
// others wait for, or sit in, the analysers. Frames borrow their chunk,
// so the file is read without a copy per packet; a chunk comes back when
// the analysers release its batch.
const readChunks = 4

// Footprint is what a file port holds in flight: readChunks chunks and
// the frame lists of the packets they hold, at most one per 16-byte
// record header (about 1 000 a chunk in practice).
func (s *Source) Footprint() capture.Footprint {
	const perChunk = chunkSize / minRecord
	return capture.Footprint{Heap: readChunks * (chunkSize + perChunk*int64(unsafe.Sizeof(capture.Frame{})))}
}

// minRecord is the smallest packet record: a pcap record header.
const minRecord = 16

var _ capture.Sizer = (*Source)(nil)

func (s *Source) run(ctx context.Context, out *capture.Handoff) error {
	f, err := os.Open(s.path)
	if err != nil {
		s.counters.Error("open")
		return err
	}
	defer f.Close()
	c := newChunks(ctx, out)
	rd, err := newReader(f, c.next)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.counters.Error("format")
		return fmt.Errorf("%s: %w", s.path, err)
	}
	rd.OnSecrets(s.secrets)
	var rec Record
	for {
		err := rd.nextInto(&rec)
		if err == io.EOF {
			return c.flush()
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var fe *FormatError
			if errors.As(err, &fe) {
				s.counters.Error("format")
			} else {
				s.counters.Error("read")
			}
			if ferr := c.flush(); ferr != nil {
				return ferr
			}
			return fmt.Errorf("%s: %w", s.path, err)
		}
		// Field by field, not a composite literal: that is built on the
		// stack and copied, a store-forwarding stall a packet (Reader.nextInto).
		c.frames = append(c.frames, capture.Frame{})
		f := &c.frames[len(c.frames)-1]
		f.Time, f.Link, f.Data, f.OrigLen = rec.Time, rec.Link, rec.Data, rec.OrigLen
	}
}

// chunks hands the frames read from one chunk off as one batch when the
// reader moves on, and recycles chunks the analysers release.
type chunks struct {
	ctx    context.Context
	out    *capture.Handoff
	free   chan chunk
	made   int
	cur    []byte          // the chunk the frames borrow
	frames []capture.Frame // frames read from cur, not yet handed off
}

type chunk struct {
	buf    []byte
	frames []capture.Frame
}

func newChunks(ctx context.Context, out *capture.Handoff) *chunks {
	return &chunks{ctx: ctx, out: out, free: make(chan chunk, readChunks)}
}

// next hands off the frames of old and returns a chunk of at least n
// bytes, waiting for the analysers to release one when all are in flight.
func (c *chunks) next(old []byte, n int) ([]byte, error) {
	if err := c.flush(); err != nil {
		return nil, err
	}
	var ch chunk
	select {
	case ch = <-c.free:
	default:
		if c.made < readChunks {
			c.made++
			ch = chunk{buf: make([]byte, chunkSize)}
			break
		}
		select {
		case ch = <-c.free:
		case <-c.ctx.Done():
			return nil, c.ctx.Err()
		}
	}
	if len(ch.buf) < n {
		ch.buf = make([]byte, n) // a record larger than a chunk, once
	}
	c.cur, c.frames = ch.buf, ch.frames[:0]
	return ch.buf, nil
}

// flush hands the frames read so far off as one batch borrowing cur.
// A chunk without frames (file headers, a record straddling two chunks)
// goes back to the free list at once.
func (c *chunks) flush() error {
	ch := chunk{buf: c.cur, frames: c.frames}
	c.cur, c.frames = nil, nil
	if ch.buf == nil {
		return nil
	}
	if len(ch.frames) == 0 {
		c.free <- ch
		return nil
	}
	// The frames are not cleared on release: what they point at is the
	// chunk they come back with.
	return c.out.PutBatch(c.ctx, capture.NewBatch(ch.frames, func() { c.free <- ch }))
}
