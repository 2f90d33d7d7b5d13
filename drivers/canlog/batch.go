package canlog

import (
	"context"
	"time"

	"fieldtap/drivers/capture"
)

// Batcher is the batching of Source for other CAN file readers
// (drivers/canfiles): frames laid out in recycled buffers and handed off
// a batch at a time, nothing allocated per frame.
type Batcher struct{ b *batcher }

// NewBatcher returns a Batcher handing batches to out.
func NewBatcher(ctx context.Context, out *capture.Handoff) *Batcher {
	return &Batcher{b: newBatcher(ctx, out)}
}

// Add lays one frame out (id with wire's flag bits; flags is wire's CAN
// FD flags byte, CANFDFDF for an FD frame, zero for a classic one); bad is
// called, and nothing kept, when the frame is not one wire.AppendCANFrame
// takes. It returns the hand-off's error when a full batch cannot go.
func (b *Batcher) Add(t time.Time, id uint32, flags uint8, payload []byte, bad func()) error {
	return b.b.add(t, id, flags, payload, bad)
}

// Finish ends the read of the file at path with what reading it returned
// (err): the frames not yet handed off still go, and an error other than
// the context's is counted in counters as a "read" error and returned
// named with path.
func (b *Batcher) Finish(err error, path string, counters *capture.Counters) error {
	return b.b.finish(err, path, counters)
}

// BatchFootprint is what a Batcher holds in flight.
func BatchFootprint() capture.Footprint { return (&Source{}).Footprint() }
