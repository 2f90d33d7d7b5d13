package mqttpub

import "sync"

// message is one publication waiting for the broker.
type message struct {
	seq     uint64
	topic   string
	payload []byte
	retain  bool
}

func (m message) size() int { return len(m.topic) + len(m.payload) }

// queue is the bounded queue between the feeder and the broker. A
// retained message replaces a queued one for the same topic (only the
// latest state matters); past the bounds the oldest message goes.
type queue struct {
	mu              sync.Mutex
	items           []message
	bytes           int
	maxItems        int
	maxBytes        int
	seq             uint64
	dropped         uint64 // oldest dropped for room
	tooLarge        uint64 // larger than the whole byte bound
	superseded      uint64 // retained state replaced before it was sent
	ready           chan struct{}
	refusedByBroker uint64
}

func newQueue(maxItems, maxBytes int) *queue {
	return &queue{maxItems: maxItems, maxBytes: maxBytes, ready: make(chan struct{}, 1)}
}

func (q *queue) push(topic string, payload []byte, retain bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	m := message{topic: topic, payload: payload, retain: retain}
	if m.size() > q.maxBytes {
		q.tooLarge++
		return
	}
	if retain {
		for i, old := range q.items {
			if old.retain && old.topic == topic {
				q.remove(i)
				q.superseded++
				break
			}
		}
	}
	for len(q.items) >= q.maxItems || q.bytes+m.size() > q.maxBytes {
		q.remove(0)
		q.dropped++
	}
	q.seq++
	m.seq = q.seq
	q.items = append(q.items, m)
	q.bytes += m.size()
	q.wake()
}

// wake tells drain there is something to send.
func (q *queue) wake() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *queue) remove(i int) {
	q.bytes -= q.items[i].size()
	q.items = append(q.items[:i], q.items[i+1:]...)
}

// head returns the oldest message.
func (q *queue) head() (message, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return message{}, false
	}
	return q.items[0], true
}

// done removes m once the broker has it, unless it was dropped or
// superseded meanwhile.
func (q *queue) done(m message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) > 0 && q.items[0].seq == m.seq {
		q.remove(0)
	}
}

// refuse drops m after the broker refused it.
func (q *queue) refuse(m message) {
	q.done(m)
	q.mu.Lock()
	q.refusedByBroker++
	q.mu.Unlock()
}

func (q *queue) len() (int, int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items), q.bytes
}
