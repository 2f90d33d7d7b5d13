package transmit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// auditTailBytes is how much of the audit file start-up reads. A
// "sending" record of a MaxFrames plan is about 24 KiB of JSON, so this
// holds the records of the last several plans; a plan whose sending record
// lies before the window is not seen, and Tail.Partial says so.
const auditTailBytes = 256 << 10

// Interrupted is a plan the previous run began to send and never finished:
// its "sending" record has no result after it.
type Interrupted struct {
	PlanID string
	Port   string
	Tool   string
	Hash   string
	Began  time.Time
	Frames int // in the plan; how many went out is unknown
}

// Tail is what the end of an audit file says about the run that wrote it.
type Tail struct {
	Interrupted []Interrupted
	Records     int
	// Unreadable counts whole lines that are not audit records.
	Unreadable int
	// Torn: the file ends mid-record (the crash came during a write).
	Torn bool
	// Partial: the window began mid-file, so older records were not read.
	Partial bool
}

// tailRecord is the part of a Record the scan reads.
type tailRecord struct {
	Time   time.Time         `json:"ts"`
	Event  string            `json:"event"`
	PlanID string            `json:"plan_id"`
	Port   string            `json:"port"`
	Tool   string            `json:"tool"`
	Hash   string            `json:"sha256"`
	Frames []json.RawMessage `json:"frames"`
}

// ScanTail reads audit lines from b, the end of an audit file; partial
// says b starts mid-file, so its first line is a fragment. A plan is
// interrupted when its last "sending" has no sent, stopped, uncertain,
// refused or interrupted record after it.
func ScanTail(b []byte, partial bool) Tail {
	t := Tail{Partial: partial, Interrupted: []Interrupted{}}
	if partial {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return t
		}
		b = b[i+1:]
	}
	if n := len(b); n > 0 && b[n-1] != '\n' {
		t.Torn = true
		b = b[:bytes.LastIndexByte(b, '\n')+1]
	}
	open := map[string]Interrupted{}
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r tailRecord
		if err := json.Unmarshal(line, &r); err != nil || r.Event == "" {
			t.Unreadable++
			continue
		}
		t.Records++
		if r.PlanID == "" {
			continue
		}
		switch r.Event {
		case EventSending:
			open[r.PlanID] = Interrupted{PlanID: r.PlanID, Port: r.Port, Tool: r.Tool, Hash: r.Hash, Began: r.Time, Frames: len(r.Frames)}
		case EventSent, EventStopped, EventUncertain, EventRefused, EventInterrupted:
			delete(open, r.PlanID)
		}
	}
	for _, in := range open {
		t.Interrupted = append(t.Interrupted, in)
	}
	sort.Slice(t.Interrupted, func(i, j int) bool { return t.Interrupted[i].Began.Before(t.Interrupted[j].Began) })
	return t
}

// readTail scans the last auditTailBytes of f.
func readTail(f *os.File) (Tail, error) {
	fi, err := f.Stat()
	if err != nil {
		return Tail{}, err
	}
	off := max(0, fi.Size()-auditTailBytes)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
		return Tail{}, fmt.Errorf("read the tail: %w", err)
	}
	return ScanTail(b, off > 0), nil
}

// PortReset is what start-up did to one CAN port before anything else:
// put it back in listen-only, or why it could not.
type PortReset struct {
	Port   string `json:"port"`
	Driver string `json:"driver"`
	Mode   Mode   `json:"mode,omitempty"` // ModeListenOnly when it worked
	Error  string `json:"error,omitempty"`
}

// PreviousRun is what the daemon found at start-up, for transmit_status.
type PreviousRun struct {
	Interrupted []Interrupted
	TornRecord  bool
	// UnreadableLines and Partial say how far the tail can be trusted:
	// lines that were not records, and a window that began mid-file (a
	// plan sent before it is not seen).
	UnreadableLines int
	Partial         bool
	PortsReset      []PortReset
}

// RecordStart writes what this run found and did at start-up, before any
// plan: one "interrupted" record per plan the previous run left mid-send,
// then the "started" record naming each CAN port put back in listen-only.
// transmit_status shows the same (Status.PreviousRun). The daemon calls it
// once, after the listen-only step and before serving.
func (s *Service) RecordStart(ctx context.Context, tail Tail, resets []PortReset) error {
	if resets == nil {
		resets = []PortReset{}
	}
	s.mu.Lock()
	s.previous = &PreviousRun{Interrupted: tail.Interrupted, TornRecord: tail.Torn, UnreadableLines: tail.Unreadable, Partial: tail.Partial, PortsReset: resets}
	if s.previous.Interrupted == nil {
		s.previous.Interrupted = []Interrupted{}
	}
	s.mu.Unlock()
	if !auditConfigured(s.o.Audit) {
		return nil // no audit file: nothing to record, and nothing is ever sent
	}
	reset := map[string]PortReset{}
	for _, r := range resets {
		reset[r.Port] = r
	}
	sys := Caller{Via: "service"}
	var errs []string
	for _, in := range tail.Interrupted {
		msg := fmt.Sprintf("the previous run wrote the sending record at %s and no result: it ended mid-plan (crash, kill or power loss); how many of the plan's %d frames went out is unknown",
			in.Began.UTC().Format(time.RFC3339Nano), in.Frames)
		switch r, ok := reset[in.Port]; {
		case ok && r.Error == "":
			msg += "; port " + in.Port + " was put back in listen-only at start-up"
		case ok:
			msg += "; port " + in.Port + " could not be put back in listen-only at start-up: " + r.Error
		}
		err := s.audit(ctx, Record{Event: EventInterrupted, PlanID: in.PlanID, Port: in.Port, Tool: in.Tool, Hash: in.Hash, Message: msg}, sys, nil)
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	var parts []string
	for _, r := range resets {
		if r.Error != "" {
			parts = append(parts, r.Port+": "+r.Error)
		} else {
			parts = append(parts, r.Port+" "+string(r.Mode))
		}
	}
	msg := "CAN ports put back in listen-only before anything else: " + strings.Join(parts, ", ")
	if len(resets) == 0 {
		msg = "no CAN port to put back in listen-only"
	}
	if tail.Torn {
		msg += "; the previous run's last record was torn mid-write"
	}
	if tail.Unreadable > 0 {
		msg += fmt.Sprintf("; %d lines of the file's tail are not records", tail.Unreadable)
	}
	if tail.Partial {
		msg += fmt.Sprintf("; only the last %d KiB of the file were read", auditTailBytes>>10)
	}
	if err := s.audit(ctx, Record{Event: EventStarted, Message: msg, Ports: resets}, sys, nil); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("transmit: start-up audit: %s", strings.Join(errs, "; "))
	}
	return nil
}
