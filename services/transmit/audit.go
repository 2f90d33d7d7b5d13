package transmit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"
)

// Audit events.
const (
	EventPlanned   = "planned"
	EventRefused   = "refused"
	EventAsked     = "confirmation_asked"
	EventSending   = "sending" // written before the first byte
	EventSent      = "sent"
	EventStopped   = "stopped" // writer failure or disarm mid-plan
	EventModeError = "mode_error"
)

// Record is one audit line.
type Record struct {
	Time    time.Time `json:"ts"`
	Event   string    `json:"event"`
	PlanID  string    `json:"plan_id,omitempty"`
	Port    string    `json:"port,omitempty"`
	Tool    string    `json:"tool,omitempty"`
	Risk    Risk      `json:"risk,omitempty"`
	Hash    string    `json:"sha256,omitempty"`
	Caller  Caller    `json:"caller"`
	Gate    string    `json:"gate,omitempty"`
	Message string    `json:"message,omitempty"`
	Frames  []Frame   `json:"frames,omitempty"`
	Sent    int       `json:"frames_sent,omitempty"`
	Confirm string    `json:"confirmation,omitempty"`
}

// Auditor keeps the transmit record. A Record error before a write refuses
// the write (GateAudit).
type Auditor interface {
	Record(ctx context.Context, r Record) error
}

// FileAuditor appends one JSON line per record to a file opened O_APPEND
// and created 0600; one write per record under a lock.
type FileAuditor struct {
	mu sync.Mutex
	f  *os.File
}

// auditFileMode keeps the record private: it names callers and plans.
const auditFileMode = 0o600

// OpenFileAuditor opens (or creates) path for appending.
func OpenFileAuditor(path string) (*FileAuditor, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, auditFileMode)
	if err != nil {
		return nil, fmt.Errorf("transmit audit %s: %w", path, err)
	}
	return &FileAuditor{f: f}, nil
}

// Record writes r as one line and syncs it, so a record said to be
// written survives a power cut.
func (a *FileAuditor) Record(_ context.Context, r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return fmt.Errorf("transmit audit: the file is closed")
	}
	if _, err := a.f.Write(append(b, '\n')); err != nil {
		return err
	}
	return a.f.Sync()
}

// Close closes the file; a Record after it fails (and so refuses its
// write) instead of writing to a closed file.
func (a *FileAuditor) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.f.Close()
	a.f = nil
	return err
}

// noAuditor refuses every record: with no audit file configured nothing
// may be sent, but dry runs still work.
type noAuditor struct{}

func (noAuditor) Record(context.Context, Record) error {
	return fmt.Errorf("no transmit audit file is configured ([transmit] audit_file)")
}

var _ Auditor = (*FileAuditor)(nil)
