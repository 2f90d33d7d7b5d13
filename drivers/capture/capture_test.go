package capture

import (
	"context"
	"errors"
	"testing"
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

func TestOrigLenCountsWireBytes(t *testing.T) {
	var c Counters
	h := NewHandoff(4, &c)
	h.Offer(Frame{Data: make([]byte, 64), OrigLen: 1500})
	if s := c.Snapshot(); s.Bytes != 1500 {
		t.Errorf("bytes = %d, want the wire length 1500", s.Bytes)
	}
}
