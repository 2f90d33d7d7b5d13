package transmit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// auditLines writes records as the FileAuditor does.
func auditLines(t testing.TB, recs ...Record) []byte {
	t.Helper()
	var b []byte
	for _, r := range recs {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, j...), '\n')
	}
	return b
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func sending(id string, at time.Time) Record {
	return Record{Time: at, Event: EventSending, PlanID: id, Port: "can0", Tool: "can_send", Hash: "h-" + id,
		Frames: []Frame{{ID: 0x100, Data: []byte{1}}, {ID: 0x100, Data: []byte{2}}}}
}

func TestScanTail(t *testing.T) {
	for _, tc := range []struct {
		name     string
		b        []byte
		partial  bool
		want     []string // interrupted plan ids
		torn     bool
		records  int
		unreadbl int
	}{
		{name: "empty"},
		{name: "every plan finished", b: auditLines(t,
			Record{Time: t0, Event: EventPlanned, PlanID: "a"}, sending("a", t0), Record{Event: EventSent, PlanID: "a"},
			sending("b", t0), Record{Event: EventStopped, PlanID: "b"},
			sending("c", t0), Record{Event: EventRefused, PlanID: "c"},
			sending("d", t0), Record{Event: EventUncertain, PlanID: "d", Frame: 1, LateReply: LateAck}), records: 9},
		{name: "killed mid-plan", b: auditLines(t, Record{Event: EventStarted}, sending("a", t0), Record{Event: EventSent, PlanID: "a"}, sending("b", t0.Add(time.Second))),
			want: []string{"b"}, records: 4},
		{name: "already reported by the run after", b: auditLines(t, sending("b", t0), Record{Event: EventInterrupted, PlanID: "b"}, Record{Event: EventStarted}), records: 3},
		{name: "two ports, oldest first", b: auditLines(t, sending("y", t0.Add(time.Second)), sending("x", t0)), want: []string{"x", "y"}, records: 2},
		{name: "torn mid-write", b: append(auditLines(t, sending("a", t0)), `{"ts":"2026-03-01T12:00:01Z","event":"se`...),
			want: []string{"a"}, torn: true, records: 1},
		{name: "window starts mid-line", b: append([]byte(`frames":[]}`+"\n"), auditLines(t, sending("a", t0))...), partial: true, want: []string{"a"}, records: 1},
		{name: "garbage lines counted", b: append([]byte("not json\n{}\n"), auditLines(t, sending("a", t0))...), want: []string{"a"}, records: 1, unreadbl: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ScanTail(tc.b, tc.partial)
			var ids []string
			for _, in := range got.Interrupted {
				ids = append(ids, in.PlanID)
				if in.Port != "can0" || in.Frames != 2 || in.Hash != "h-"+in.PlanID {
					t.Errorf("interrupted %+v", in)
				}
			}
			if strings.Join(ids, ",") != strings.Join(tc.want, ",") || got.Torn != tc.torn || got.Records != tc.records || got.Unreadable != tc.unreadbl || got.Partial != tc.partial {
				t.Errorf("tail %+v, want interrupted %v torn %v records %d unreadable %d", got, tc.want, tc.torn, tc.records, tc.unreadbl)
			}
		})
	}
}

// TestRestartRecordsTheInterruptedPlan is the kill -9 story on a file: a
// run dies after "sending"; the next run's auditor reads the tail, closes
// the torn line, and RecordStart writes "interrupted" (naming the port
// reset) and "started"; transmit_status says the same. A third start finds
// nothing unfinished.
func TestRestartRecordsTheInterruptedPlan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "transmit.jsonl")
	killed := append(auditLines(t, Record{Time: t0, Event: EventPlanned, PlanID: "tx-1"}, sending("tx-1", t0)), `{"ts":"2026-03-01T12:00:00.5Z","event":"mode_`...)
	if err := os.WriteFile(path, killed, 0o600); err != nil {
		t.Fatal(err)
	}
	start := func() (*Service, *FileAuditor) {
		t.Helper()
		fa, err := OpenFileAuditor(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fa.Close() })
		r := openRig(t)
		r.o.Audit = fa
		s, err := New(r.o)
		if err != nil {
			t.Fatal(err)
		}
		resets := []PortReset{{Port: "can0", Driver: "slcan", Mode: ModeListenOnly}, {Port: "can1", Driver: "socketcan", Error: "no such device"}}
		if err := s.RecordStart(context.Background(), fa.Tail(), resets); err != nil {
			t.Fatal(err)
		}
		return s, fa
	}
	s, fa := start()
	if tail := fa.Tail(); len(tail.Interrupted) != 1 || tail.Interrupted[0].PlanID != "tx-1" || !tail.Torn {
		t.Fatalf("tail %+v", tail)
	}
	prev := s.Status(Owner{}).PreviousRun
	if prev == nil || len(prev.Interrupted) != 1 || !prev.TornRecord || len(prev.PortsReset) != 2 {
		t.Fatalf("transmit_status previous_run %+v", prev)
	}
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines:\n%s", len(lines), b)
	}
	var in, st Record
	if err := json.Unmarshal([]byte(lines[3]), &in); err != nil {
		t.Fatalf("the record after the torn line does not parse (the torn line was not closed): %v\n%s", err, lines[3])
	}
	json.Unmarshal([]byte(lines[4]), &st)
	if in.Event != EventInterrupted || in.PlanID != "tx-1" || in.Hash != "h-tx-1" || !strings.Contains(in.Message, "ended mid-plan") ||
		!strings.Contains(in.Message, "port can0 was put back in listen-only") {
		t.Errorf("interrupted record %+v", in)
	}
	if st.Event != EventStarted || len(st.Ports) != 2 || !strings.Contains(st.Message, "can1: no such device") {
		t.Errorf("started record %+v", st)
	}
	s, _ = start()
	if prev := s.Status(Owner{}).PreviousRun; len(prev.Interrupted) != 0 || prev.TornRecord {
		t.Errorf("the third start still finds %+v", prev)
	}
}

// FuzzScanTail: the tail is whatever a crash left. Scanning never panics,
// and every plan it reports has an id and counts within the input.
func FuzzScanTail(f *testing.F) {
	f.Add(auditLines(f, sending("a", t0), Record{Event: EventSent, PlanID: "a"}, sending("b", t0)), false)
	f.Add([]byte(`{"event":"sending","plan_id":"x","frames":[{},{}]}`+"\n"+`{"event":"sen`), true)
	f.Add([]byte("\n\n{}\n"), false)
	f.Add(auditLines(f, sending("u", t0), Record{Event: EventUncertain, PlanID: "u", Frame: 1, LateReply: LateAck}), false)
	f.Fuzz(func(t *testing.T, b []byte, partial bool) {
		tail := ScanTail(b, partial)
		lines := strings.Count(string(b), "\n")
		if tail.Records+tail.Unreadable > lines || len(tail.Interrupted) > tail.Records {
			t.Errorf("%d records, %d unreadable, %d interrupted from %d lines", tail.Records, tail.Unreadable, len(tail.Interrupted), lines)
		}
		for _, in := range tail.Interrupted {
			if in.PlanID == "" {
				t.Error("an interrupted plan without an id")
			}
		}
	})
}
