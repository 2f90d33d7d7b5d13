package metrics

import (
	"context"
	"errors"
	"maps"
	"sync"

	"fieldtap/services/transmit"
)

// Outcomes of a transmit attempt as counted: the events that end an
// Execute call.
var attemptOutcomes = []string{transmit.EventSent, transmit.EventStopped, transmit.EventUncertain, transmit.EventRefused, transmit.EventAsked}

// errNoAudit keeps the transmitter's rule when no audit file is
// configured: every record fails, so nothing is sent unrecorded.
var errNoAudit = errors.New("no transmit audit file is configured ([transmit] audit_file)")

// TransmitCounter counts every transmit audit record by event and
// refusal gate, then hands it to the real auditor. It changes nothing
// the gatekeeper decides: the auditor's error is returned as is, and
// without an auditor every record fails as it would without one.
type TransmitCounter struct {
	next   transmit.Auditor
	mu     sync.Mutex
	events map[string]uint64
	gates  map[string]uint64
}

// CountTransmit wraps next (nil: no audit file).
func CountTransmit(next transmit.Auditor) *TransmitCounter {
	return &TransmitCounter{next: next, events: map[string]uint64{}, gates: map[string]uint64{}}
}

// Record implements transmit.Auditor.
func (c *TransmitCounter) Record(ctx context.Context, r transmit.Record) error {
	c.mu.Lock()
	c.events[r.Event]++
	if r.Event == transmit.EventRefused {
		c.gates[r.Gate]++
	}
	c.mu.Unlock()
	if c.next == nil {
		return errNoAudit
	}
	return c.next.Record(ctx, r)
}

// Configured reports whether an audit file is behind the counter: the
// transmitter's readiness and start-up record ask it.
func (c *TransmitCounter) Configured() bool { return c.next != nil }

// counts copies the tallies.
func (c *TransmitCounter) counts() (events, gates map[string]uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.events), maps.Clone(c.gates)
}

var _ transmit.Auditor = (*TransmitCounter)(nil)
