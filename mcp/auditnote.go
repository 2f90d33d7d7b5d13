package mcp

import (
	"context"
	"sync"

	"fieldtap/services/transmit"
)

// auditNote is what a run adds to its call's audit record: for a call
// that reached the transmitter, the plan, its frames' digest and the
// outcome exactly as the transmit audit records them, so the two files
// tell one story.
type auditNote struct {
	mu       sync.Mutex
	transmit *transmit.Note
}

type auditNoteKey struct{}

func withAuditNote(ctx context.Context) (context.Context, *auditNote) {
	n := &auditNote{}
	return context.WithValue(ctx, auditNoteKey{}, n), n
}

// note records the transmit outcome of this call for its audit record.
func (c *call) note(n transmit.Note) {
	if an, has := c.ctx.Value(auditNoteKey{}).(*auditNote); has {
		an.mu.Lock()
		an.transmit = &n
		an.mu.Unlock()
	}
}

func (n *auditNote) transmitNote() *transmit.Note {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.transmit
}
