package sipgen

import (
	"container/heap"
	"time"
)

// stream yields datagrams in nondecreasing time order.
type stream interface {
	// peek reports the offset of the next datagram; false when done.
	peek() (time.Duration, bool)
	// pop renders the next datagram and moves on.
	pop() datagram
}

// queue merges streams by time; ties go to the stream added first, so the
// order never depends on anything but the plan.
type queue []queued

type queued struct {
	at    time.Duration
	order int
	s     stream
}

func newQueue(streams []stream) *queue {
	q := make(queue, 0, len(streams))
	for i, s := range streams {
		if at, ok := s.peek(); ok {
			q = append(q, queued{at, i, s})
		}
	}
	heap.Init(&q)
	return &q
}

// next pops the earliest datagram; false when every stream is done.
func (q *queue) next() (time.Duration, datagram, bool) {
	if len(*q) == 0 {
		return 0, datagram{}, false
	}
	top := &(*q)[0]
	at, d := top.at, top.s.pop()
	if nextAt, ok := top.s.peek(); ok {
		top.at = nextAt
		heap.Fix(q, 0)
	} else {
		heap.Pop(q)
	}
	return at, d, true
}

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].order < q[j].order
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *queue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
