package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestHandoffCountsDropsWhenFull(t *testing.T) {
	var c Counters
	h := NewHandoff(2, &c)
	t0 := time.Unix(100, 0)
	for i := range 5 {
		h.Offer(Frame{Time: t0.Add(time.Duration(i) * time.Second), Data: make([]byte, 10)})
	}
	s := c.Snapshot()
	if s.Frames != 2 || s.Bytes != 20 {
		t.Errorf("frames=%d bytes=%d, want 2 and 20", s.Frames, s.Bytes)
	}
	if got := s.Drops[DropHandoffFull]; got != 3 {
		t.Errorf("handoff drops = %d, want 3", got)
	}
	if !s.First.Equal(t0) || !s.Last.Equal(t0.Add(time.Second)) {
		t.Errorf("first/last = %v/%v", s.First, s.Last)
	}
}

// A batch's frames out of order (a file merged from two ports, a
// driver's reordered ring) still give the earliest and latest time.
func TestHandoffBatchTimesOutOfOrder(t *testing.T) {
	var c Counters
	h := NewHandoff(16, &c)
	t0 := time.Unix(100, 0)
	var frames []Frame
	for _, s := range []int{5, 7, 2, 6, 1, 9, 3} {
		frames = append(frames, Frame{Time: t0.Add(time.Duration(s) * time.Second), Data: []byte{1}})
	}
	if err := h.PutBatch(context.Background(), NewBatch(frames, nil)); err != nil {
		t.Fatal(err)
	}
	if s := c.Snapshot(); !s.First.Equal(t0.Add(time.Second)) || !s.Last.Equal(t0.Add(9*time.Second)) || s.Frames != 7 {
		t.Errorf("frames %d, first/last = %v/%v, want 7, %v/%v", s.Frames, s.First, s.Last, t0.Add(time.Second), t0.Add(9*time.Second))
	}
}

func TestHandoffPutWaitsAndHonoursContext(t *testing.T) {
	var c Counters
	h := NewHandoff(1, &c)
	ctx, cancel := context.WithCancel(context.Background())
	if err := h.Put(ctx, Frame{Data: []byte{1}}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := h.Put(ctx, Frame{Data: []byte{2}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Put on a full queue after cancel = %v, want context.Canceled", err)
	}
	if s := c.Snapshot(); s.Frames != 1 || len(s.Drops) != 0 {
		t.Errorf("stats = %+v, want 1 frame and no drops", s)
	}
}

func TestSnapshotIsACopy(t *testing.T) {
	var c Counters
	c.Error("bad")
	s := c.Snapshot()
	c.Error("bad")
	if s.Errors["bad"] != 1 {
		t.Errorf("snapshot changed after a later update: %v", s.Errors)
	}
}

// A finite source's end: read through, stopped by an error (said), or
// cancelled (a stop, not an end: not marked, and Run returns nil).
func TestEndedMarksAFiniteSource(t *testing.T) {
	bad := errors.New("truck.log: unexpected EOF")
	for _, tc := range []struct {
		err, want error
		exhausted bool
		why       string
	}{
		{nil, nil, true, ""},
		{bad, bad, true, bad.Error()},
		{fmt.Errorf("put: %w", context.Canceled), nil, false, ""},
	} {
		var c Counters
		got := c.Ended(tc.err)
		st := c.Snapshot()
		if got != tc.want || st.Exhausted != tc.exhausted || st.StoppedEarly != tc.why {
			t.Errorf("Ended(%v) = %v, exhausted %v (%q); want %v, %v (%q)", tc.err, got, st.Exhausted, st.StoppedEarly, tc.want, tc.exhausted, tc.why)
		}
	}
}

func TestOrigLenCountsWireBytes(t *testing.T) {
	var c Counters
	h := NewHandoff(4, &c)
	h.Offer(Frame{Data: make([]byte, 64), OrigLen: 1500})
	if s := c.Snapshot(); s.Bytes != 1500 {
		t.Errorf("bytes = %d, want the wire length 1500", s.Bytes)
	}
}

func TestReadLines(t *testing.T) {
	type got struct {
		n        int
		line     string
		overlong bool
	}
	cases := []struct {
		name string
		in   string
		want []got
	}{
		{name: "lines", in: "a\nbb\n", want: []got{{1, "a", false}, {2, "bb", false}}},
		{name: "no final newline", in: "a\nbb", want: []got{{1, "a", false}, {2, "bb", false}}},
		{name: "blank lines are numbered, not delivered", in: "\na\n\n", want: []got{{2, "a", false}}},
		{name: "a line of exactly max", in: "12345678\nx\n", want: []got{{1, "12345678", false}, {2, "x", false}}},
		{name: "an overlong line is skipped whole", in: "123456789abcdefghijkl\nx\n", want: []got{{1, "", true}, {2, "x", false}}},
		{name: "an overlong last line", in: "x\n123456789abcdefghijkl", want: []got{{1, "x", false}, {2, "", true}}},
		{name: "overlong within bufio's smallest buffer", in: "123456789\nx\n", want: []got{{1, "", true}, {2, "x", false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out []got
			err := ReadLines(strings.NewReader(tc.in), 8, func(n int, line []byte, overlong bool) error {
				out = append(out, got{n, string(line), overlong})
				return nil
			})
			if err != nil || !slices.Equal(out, tc.want) {
				t.Errorf("got %v, %v; want %v", out, err, tc.want)
			}
		})
	}
}

func TestReadLinesNamesTheLineOfAReadError(t *testing.T) {
	boom := errors.New("boom")
	var lines []string
	err := ReadLines(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), 8, func(_ int, line []byte, _ bool) error {
		lines = append(lines, string(line))
		return nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "line 2") || !slices.Equal(lines, []string{"a"}) {
		t.Errorf("got %q, %v; want line a, then the error at line 2", lines, err)
	}
	if err := ReadLines(emptyReader{}, 8, func(int, []byte, bool) error { return nil }); !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("a reader that never reads: %v, want io.ErrNoProgress", err)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// FuzzReadLines holds ReadLines to strings.Split, whatever sizes the
// reads come in.
func FuzzReadLines(f *testing.F) {
	f.Add([]byte("a\nbb\n\n123456789abc\nx"), uint8(8))
	f.Add([]byte("(1608041700.316550) can0 18FECA00#0102\r\n"), uint8(40))
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		maxLine := int(max%64) + 1
		type got struct {
			n        int
			line     string
			overlong bool
		}
		var want []got
		for i, l := range strings.Split(strings.TrimSuffix(string(in), "\n"), "\n") {
			switch {
			case len(l) > maxLine:
				want = append(want, got{i + 1, "", true})
			case l != "":
				want = append(want, got{i + 1, l, false})
			}
		}
		for name, r := range map[string]io.Reader{
			"whole":    bytes.NewReader(in),
			"one byte": iotest.OneByteReader(bytes.NewReader(in)),
			"halves":   iotest.HalfReader(bytes.NewReader(in)),
			"data+EOF": iotest.DataErrReader(bytes.NewReader(in)),
		} {
			var out []got
			err := ReadLines(r, maxLine, func(n int, line []byte, overlong bool) error {
				out = append(out, got{n, string(line), overlong})
				return nil
			})
			if err != nil || !slices.Equal(out, want) {
				t.Fatalf("%s, max %d: got %v, %v; want %v", name, maxLine, out, err, want)
			}
		}
	})
}

func TestReceiveTakesSingleFramesAsOneBatch(t *testing.T) {
	var c Counters
	h := NewHandoff(16, &c)
	for i := range 5 {
		h.Offer(Frame{Data: []byte{byte(i)}})
	}
	b, ok := h.Receive()
	if !ok || len(b.Frames) != 5 || b.Frames[4].Data[0] != 4 {
		t.Fatalf("Receive = %d frames, %v; want the 5 offered, in order", len(b.Frames), ok)
	}
	h.Release(b)
	h.Close()
	if _, ok := h.Receive(); ok {
		t.Error("Receive after Close on an empty queue must report the end")
	}
}

// TestInFlightIsBoundedUntilRelease: frames the consumer holds still count
// against the depth, so the queue's memory is bounded by depth frames.
func TestInFlightIsBoundedUntilRelease(t *testing.T) {
	var c Counters
	h := NewHandoff(4, &c)
	released := 0
	h.OfferBatch(NewBatch(make([]Frame, 3), func() { released++ }))
	b, _ := h.Receive()
	if n := h.OfferBatch(NewBatch(make([]Frame, 3), func() { released++ })); n != 1 {
		t.Fatalf("queued %d of 3 while the consumer holds 3 of depth 4; want 1", n)
	}
	if s := c.Snapshot(); s.Drops[DropHandoffFull] != 2 || s.Frames != 4 {
		t.Errorf("counters = %+v, want 4 delivered and 2 dropped", s)
	}
	h.Release(b)
	if released != 1 {
		t.Errorf("release ran %d times, want once for the released batch", released)
	}
	b, _ = h.Receive()
	h.Release(b)
	if released != 2 || h.OfferBatch(NewBatch(make([]Frame, 4), nil)) != 4 {
		t.Errorf("after both releases: released %d, and a full batch must fit again", released)
	}
}

func TestPutBatchWaitsForRoom(t *testing.T) {
	var c Counters
	h := NewHandoff(2, &c)
	ctx := context.Background()
	if err := h.PutBatch(ctx, NewBatch(make([]Frame, 2), nil)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.PutBatch(ctx, NewBatch(make([]Frame, 2), nil)) }()
	b, _ := h.Receive()
	h.Release(b) // makes room: the waiting PutBatch goes through
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A batch larger than the queue waits for an empty queue, then fits.
	b, _ = h.Receive()
	go func() { done <- h.PutBatch(ctx, NewBatch(make([]Frame, 5), nil)) }()
	h.Release(b)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b, _ := h.Receive(); len(b.Frames) != 5 {
		t.Errorf("oversized batch arrived with %d frames", len(b.Frames))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	released := false
	if err := h.PutBatch(cctx, NewBatch(make([]Frame, 1), func() { released = true })); !errors.Is(err, context.Canceled) || !released {
		t.Errorf("PutBatch on a full queue after cancel = %v (released %v); want context.Canceled and the batch released", err, released)
	}
}
