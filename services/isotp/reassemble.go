package isotp

import "fmt"

// Reassembler rebuilds one payload from the frames of one sender. The
// zero value is ready. It is not safe for concurrent use.
type Reassembler struct {
	buf  []byte
	want int
	seq  int
	busy bool
}

// Result of feeding one frame.
type Result struct {
	// Payload is set when a message is complete; it is owned by the caller.
	Payload []byte
	// NeedFlowControl is set after a first frame: the receiver must answer
	// with a flow-control frame before the sender continues.
	NeedFlowControl bool
	// Flow is set when the frame was a flow-control frame (for a sender).
	Flow *Frame
}

// Feed takes one CAN data field. A new single or first frame abandons a
// message in progress, as ISO 15765-2 §9.8.3 says a receiver must.
func (r *Reassembler) Feed(b []byte) (Result, error) {
	f, err := Parse(b)
	if err != nil {
		return Result{}, err
	}
	switch f.Type {
	case TypeSingle:
		r.busy = false
		return Result{Payload: append([]byte(nil), f.Data...)}, nil
	case TypeFirst:
		r.buf = append(r.buf[:0], f.Data...)
		r.want, r.seq, r.busy = f.Length, 1, true
		return Result{NeedFlowControl: true}, nil
	case TypeFlowControl:
		return Result{Flow: &f}, nil
	}
	if !r.busy {
		return Result{}, fmt.Errorf("%w: no first frame before sequence %d", ErrSequence, f.Seq)
	}
	if f.Seq != r.seq&0x0F {
		r.busy = false
		return Result{}, fmt.Errorf("%w: got %d, want %d", ErrSequence, f.Seq, r.seq&0x0F)
	}
	r.seq++
	r.buf = append(r.buf, f.Data[:min(len(f.Data), r.want-len(r.buf))]...)
	if len(r.buf) < r.want {
		return Result{}, nil
	}
	r.busy = false
	return Result{Payload: append([]byte(nil), r.buf...)}, nil
}

// Busy reports whether a multi-frame message is in progress.
func (r *Reassembler) Busy() bool { return r.busy }
