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
	EventPlanned = "planned"
	EventRefused = "refused"
	EventAsked   = "confirmation_asked"
	EventSending = "sending" // written before the first byte
	EventSent    = "sent"
	EventStopped = "stopped" // writer failure or disarm mid-plan
	// EventUncertain: the run stopped at a frame the writer could not
	// confirm, which may have gone out.
	EventUncertain = "uncertain"
	EventModeError = "mode_error"
	// EventConfirmCancelled: a question withdrawn before its answer.
	EventConfirmCancelled = "confirmation_cancelled"
	// EventButtonWait and EventButtonPressed bracket the wait for the
	// board's confirm button.
	EventButtonWait    = "button_waiting"
	EventButtonPressed = "button_pressed"
	// EventStarted opens each run of the daemon: what the start-up step
	// did to the CAN ports, and what the previous run left unfinished.
	EventStarted = "started"
	// EventInterrupted: the previous run wrote "sending" for this plan and
	// never its result (a crash, kill or power loss mid-plan).
	EventInterrupted = "interrupted"
)

// Record is one audit line.
type Record struct {
	Time   time.Time `json:"ts"`
	Event  string    `json:"event"`
	PlanID string    `json:"plan_id,omitempty"`
	Port   string    `json:"port,omitempty"`
	Tool   string    `json:"tool,omitempty"`
	Risk   Risk      `json:"risk,omitempty"`
	Hash   string    `json:"sha256,omitempty"`
	Caller Caller    `json:"caller"`
	// Session is a digest of the caller's MCP session id.
	Session string `json:"session,omitempty"`
	// CallTool is the MCP tool of the call, when it is not the plan's
	// own (transmit_execute), so both audits name the same call.
	CallTool string  `json:"call_tool,omitempty"`
	Gate     string  `json:"gate,omitempty"`
	Code     string  `json:"code,omitempty"`
	Message  string  `json:"message,omitempty"`
	Frames   []Frame `json:"frames,omitempty"`
	Sent     int     `json:"frames_sent,omitempty"`
	// Frame, LateReply and LateReplyMs are an uncertain run's: the frame
	// that may have gone out, what the adapter answered afterwards, and
	// when after the frame was handed to the writer.
	Frame       int      `json:"frame,omitempty"`
	LateReply   string   `json:"late_reply,omitempty"`
	LateReplyMs *float64 `json:"late_reply_after_ms,omitempty"`
	Confirm     string   `json:"confirmation,omitempty"`
	// Override is the caller's reason to send through Conflicts, the bus
	// check's findings at execution.
	Override  string       `json:"override_conflict,omitempty"`
	Conflicts []Conflict   `json:"conflicts,omitempty"`
	Button    *ButtonPress `json:"button,omitempty"`
	// Ports is what the start-up step did (EventStarted).
	Ports []PortReset `json:"ports,omitempty"`
}

// Auditor keeps the transmit record. A Record error before a write refuses
// the write (GateAudit).
type Auditor interface {
	Record(ctx context.Context, r Record) error
}

// FileAuditor appends one JSON line per record to a file opened O_APPEND
// and created 0600; one write per record under a lock.
type FileAuditor struct {
	mu   sync.Mutex
	f    *os.File
	tail Tail
}

// auditFileMode keeps the record private: it names callers and plans.
const auditFileMode = 0o600

// OpenFileAuditor opens (or creates) path for appending. It first reads
// the file's tail (Tail): what the previous run left unfinished. A last
// line torn by a crash mid-write is closed with a newline, so the next
// record starts a line of its own.
func OpenFileAuditor(path string) (*FileAuditor, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, auditFileMode)
	if err != nil {
		return nil, fmt.Errorf("transmit audit %s: %w", path, err)
	}
	tail, err := readTail(f)
	if err == nil && tail.Torn {
		_, err = f.Write([]byte{'\n'})
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("transmit audit %s: %w", path, err)
	}
	return &FileAuditor{f: f, tail: tail}, nil
}

// Tail is what the end of the file said when it was opened.
func (a *FileAuditor) Tail() Tail { return a.tail }

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

func (noAuditor) Configured() bool { return false }

// auditConfigured reports whether a records anywhere: an auditor with
// nothing behind it (noAuditor, the metrics counter without a file) says
// so through Configured. The readiness gate and RecordStart ask it; a
// type check for noAuditor missed the wrapper, so readiness left out
// "set [transmit] audit_file" and every start-up logged a failed record.
func auditConfigured(a Auditor) bool {
	c, ok := a.(interface{ Configured() bool })
	return !ok || c.Configured()
}

func (noAuditor) Record(context.Context, Record) error {
	return fmt.Errorf("no transmit audit file is configured ([transmit] audit_file)")
}

var _ Auditor = (*FileAuditor)(nil)
