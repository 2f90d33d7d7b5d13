package audit

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sync"
	"time"

	"fieldtap/mcp/auth"
	"fieldtap/services/transmit"
)

// Audit bounds. The args string is bounded so one call cannot grow the
// file without limit; a token id is cut so a prefix never reads as whole.
const (
	maxAuditArgs    = 1024
	maxAuditTokenID = 64
	auditCutMark    = "…(truncated)"
	auditFileMode   = 0o600 // the record carries tool arguments
)

// Defaults of Limits.
const (
	// DefaultMaxBytes is the size at which the file is rotated; with
	// the one previous file kept the disk holds at most twice this, a
	// bound a 10 s flood of refused calls stays far under.
	DefaultMaxBytes = 8 << 20
	// minAuditMaxBytes fits many maximal records (maxAuditArgs and the
	// rest) in one file, so rotation never happens record by record.
	minAuditMaxBytes = 64 << 10
	// DefaultRefusalsPerWindow is how many refused calls of one
	// caller a second are recorded one by one: enough to show what a
	// prober tried, while a flood is counted, not copied.
	DefaultRefusalsPerWindow = 10
)

// Outcomes of a call in the audit file.
const (
	OutcomeOK        = "ok"
	OutcomeToolError = "tool_error"
	OutcomeRefused   = "refused"
	// OutcomeCancelled: the call was still running when its client left
	// or the server shut down; its answer, if any, was not delivered.
	OutcomeCancelled = "cancelled"
	// OutcomeAuditGap is not a call: it says how many records before it
	// could not be written (their seq numbers are missing), and why.
	OutcomeAuditGap = "audit_gap"
	// OutcomeAuditRecovered is not a call: at start the file ended in a
	// torn record, which was cut off.
	OutcomeAuditRecovered = "audit_recovered"
)

// Limits bound the audit file. Zero fields take the defaults.
type Limits struct {
	// MaxBytes is the size at which the file is renamed to PATH.1
	// (replacing the previous one) and a new file begun.
	MaxBytes int64
	// RefusalsPerWindow is how many refused calls of one caller (address,
	// token, transport) a second are recorded one by one; the rest of
	// that second's are one record with their count.
	RefusalsPerWindow int
}

func (l *Limits) check() error {
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.RefusalsPerWindow == 0 {
		l.RefusalsPerWindow = DefaultRefusalsPerWindow
	}
	if l.MaxBytes < minAuditMaxBytes {
		return fmt.Errorf("mcp audit: max bytes %d: want at least %d", l.MaxBytes, minAuditMaxBytes)
	}
	if l.RefusalsPerWindow < 1 {
		return fmt.Errorf("mcp audit: refusals per window %d: want at least 1", l.RefusalsPerWindow)
	}
	return nil
}

// Log writes one JSON line per tools/call to a file, refused calls
// included, numbered by seq. A flood cannot make it a denial of service:
// past RefusalsPerWindow a caller's refusals are counted into one record
// a second; the file rotates at MaxBytes. Each record is one write under
// a lock to an O_APPEND file and is whole or absent (file.go). A
// record that could not be written still used its seq, so the gap shows,
// and the next record written is preceded by an audit_gap record with
// the count and the reason. No fsync: a record survives the process, not
// a power cut (the transmit audit syncs).
//
// What a lost record means depends on the call (docs/mcp-protocol.md): a
// refused call is answered anyway (its answer carries nothing), a call
// that did work is not (mcp's audit middleware answers AUDIT_FAILED).
type Log struct {
	limits Limits
	now    func() time.Time

	mu       sync.Mutex
	file     *auditFile
	seq      uint64
	lost     uint64 // records not written since the last one that was
	lostWhy  string
	refused  map[string]*refusals
	failures uint64 // records not written, since start
	written  uint64 // records written, since start
}

// Record is one line of the audit file. Error is always present
// (null on success) so a reader never tells null from absent.
type Record struct {
	Seq       uint64  `json:"seq"`
	TS        string  `json:"ts"`
	Tool      string  `json:"tool"`
	ID        string  `json:"id"`
	Caller    Caller  `json:"caller"`
	Outcome   string  `json:"outcome"`
	ElapsedMS int64   `json:"elapsed_ms"`
	Args      string  `json:"args"`
	Error     *string `json:"error"`
	// Count is how many calls a coalesced refusal record stands for, or
	// how many records an audit_gap lost; absent on a record of one call.
	Count uint64 `json:"count,omitempty"`
	// Since is the time of the first refusal a coalesced record counts
	// (TS is the last's); Tools names the tools they asked for.
	Since string   `json:"since,omitempty"`
	Tools []string `json:"tools,omitempty"`
	// Transmit is, for a call that reached the transmitter, the plan, its
	// frames' digest and the outcome as the transmit audit records them.
	Transmit *transmit.Note `json:"transmit,omitempty"`
}

// Caller is the caller as recorded; Token is absent, not blank, when
// no token was presented, so grepping "token" finds exactly those calls.
type Caller struct {
	Transport string `json:"transport"`
	Peer      string `json:"peer,omitempty"`
	Token     string `json:"token,omitempty"`
}

// Open opens (creating 0600) the audit file for appending. A path
// that cannot be opened is an error at startup, not at the first call.
// Numbering continues from the last record in the file (or in PATH.1).
func Open(path string, l Limits) (*Log, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	f, seq, cut, err := openAuditFile(path, l.MaxBytes)
	if err != nil {
		return nil, err
	}
	a := &Log{limits: l, now: time.Now, file: f, seq: seq, refused: map[string]*refusals{}}
	if cut > 0 {
		why := fmt.Sprintf("the file ended in a torn record of %d bytes, cut off at start", cut)
		a.mu.Lock()
		_ = a.writeLocked(&Record{Outcome: OutcomeAuditRecovered, TS: a.stamp(), Error: &why})
		a.mu.Unlock()
	}
	return a, nil
}

// Close writes the refusals still being counted and closes the file;
// every Record after it fails, so nothing is written to a closed file.
func (a *Log) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key := range a.refused {
		a.flushLocked(key)
	}
	return a.file.close()
}

// Records is how many records were written since start (refused calls
// included, a coalesced record once), for the metrics endpoint; 0 without
// a file.
func (a *Log) Records() uint64 {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.written
}

// Failures is how many records could not be written since start.
func (a *Log) Failures() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failures
}

// Record appends one record, numbering it. An error means the record is
// not on disk. A refused call past its caller's allowance is counted into
// that caller's coalesced record instead, and Record returns nil.
func (a *Log) Record(tool, id string, c auth.Caller, outcome string, elapsed time.Duration, args []byte, errText string) error {
	return a.RecordTransmit(tool, id, c, outcome, elapsed, args, errText, nil)
}

// RecordTransmit is Record with what the call reached the transmitter
// with (tx, nil when it did not), so the two audit files join on plan_id.
func (a *Log) RecordTransmit(tool, id string, c auth.Caller, outcome string, elapsed time.Duration, args []byte, errText string, tx *transmit.Note) error {
	if a == nil {
		return nil
	}
	r := Record{Tool: tool, ID: id, Outcome: outcome, ElapsedMS: elapsed.Milliseconds(), Args: boundArgs(args),
		Caller: Caller{Transport: c.Transport, Peer: c.Peer, Token: auditTokenID(c.TokenID)}, Transmit: tx}
	if errText != "" {
		r.Error = &errText
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.file.f == nil {
		return errAuditClosed
	}
	now := a.now()
	r.TS = now.UTC().Format(auditTimeFormat)
	if outcome == OutcomeRefused && !a.coalesce(&r, now) {
		return nil
	}
	return a.writeLocked(&r)
}

// auditTimeFormat is UTC with milliseconds.
const auditTimeFormat = "2006-01-02T15:04:05.000Z"

func (a *Log) stamp() string { return a.now().UTC().Format(auditTimeFormat) }

// writeLocked numbers r and writes it, preceded, when records were lost
// since the last write, by an audit_gap record that counts them: one
// write, so both are in the file or neither is. A record that fails still
// used its number (the gap); the gap record's own number is only taken
// when it is written.
func (a *Log) writeLocked(r *Record) error {
	var buf []byte
	r.Seq = a.seq + 1
	if a.lost > 0 {
		why := fmt.Sprintf("%d audit records before this one could not be written (their seq numbers are missing): %s", a.lost, a.lostWhy)
		gap, _ := json.Marshal(Record{Seq: a.seq + 1, TS: a.stamp(), Outcome: OutcomeAuditGap, Count: a.lost, Error: &why}) // plain values cannot fail to marshal
		buf = append(gap, '\n')
		r.Seq++
	}
	b, _ := json.Marshal(r) // escapes every value: crafted args cannot end the line
	if err := a.file.write(append(append(buf, b...), '\n')); err != nil {
		a.seq++
		a.lost++
		a.failures++
		a.lostWhy = err.Error()
		return err
	}
	a.seq, a.lost = r.Seq, 0
	a.written++
	return nil
}

// auditTokenID percent-encodes an id (a space, quote or newline cannot
// forge a field) and cuts it at maxAuditTokenID with a mark.
func auditTokenID(id string) string {
	e := url.PathEscape(id)
	if len(e) > maxAuditTokenID {
		return e[:maxAuditTokenID] + auditCutMark
	}
	return e
}

func boundArgs(b []byte) string {
	if len(b) > maxAuditArgs {
		return string(b[:maxAuditArgs]) + auditCutMark
	}
	return string(b)
}
