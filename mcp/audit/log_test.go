package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldtap/mcp/auth"
	"fieldtap/tools/tmpfs"
)

// fakeClock is a Log clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func openTestAudit(t *testing.T, path string, l Limits) (*Log, *fakeClock) {
	t.Helper()
	a, err := Open(path, l)
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	a.now = clk.now
	return a, clk
}

// accounted sums the calls the records stand for, by outcome.
func accounted(recs []Record) map[string]uint64 {
	m := map[string]uint64{}
	for _, r := range recs {
		m[r.Outcome] += max(r.Count, 1)
	}
	return m
}

var flooder = auth.Caller{Transport: "http", Peer: "10.0.0.9", TokenID: "reader"}

// TestAuditCoalescesAFloodOfRefusals: a caller's refusals past its
// allowance in a window are one record that counts them; another caller
// keeps its own allowance; the next window starts again.
func TestAuditCoalescesAFloodOfRefusals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, clk := openTestAudit(t, path, Limits{})
	args := []byte(`{"x":"` + strings.Repeat("a", 1000) + `"}`)
	const flood = 5000
	for range flood {
		if err := a.Record("no_such_tool", "7", flooder, OutcomeRefused, 0, args, "rate limited"); err != nil {
			t.Fatal(err)
		}
	}
	other := auth.Caller{Transport: "http", Peer: "10.0.0.10", TokenID: "reader"}
	a.Record("capture_status", "8", other, OutcomeRefused, 0, nil, "at capacity")
	clk.add(refusalWindow)
	a.Record("no_such_tool", "9", flooder, OutcomeRefused, 0, args, "rate limited")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAudit(t, path)
	if got := accounted(recs)[OutcomeRefused]; got != flood+2 {
		t.Errorf("records account for %d refusals, want %d", got, flood+2)
	}
	// 10 on their own, the other caller's, the group of the rest (written
	// when the flooder's next window opens), and that window's first.
	if want := DefaultRefusalsPerWindow + 3; len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	g := recs[DefaultRefusalsPerWindow+1]
	if g.Count != flood-DefaultRefusalsPerWindow || g.Caller.Peer != flooder.Peer || g.Since == "" || len(g.Tools) != 1 || g.Tools[0] != "no_such_tool" || g.Args != "" {
		t.Errorf("coalesced record %+v", g)
	}
	if st, _ := os.Stat(path); st.Size() > 64<<10 {
		t.Errorf("%d refusals wrote %d bytes", flood, st.Size())
	}
}

// TestAuditCoalescedRecordIsWrittenWhenItsWindowCloses: the count does
// not wait for the next refusal or for Close.
func TestAuditCoalescedRecordIsWrittenWhenItsWindowCloses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := Open(path, Limits{RefusalsPerWindow: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for range 3 {
		a.Record("x", "1", flooder, OutcomeRefused, 0, nil, "rate limited")
	}
	deadline := time.Now().Add(giveUpTest)
	for {
		if b, _ := os.ReadFile(path); bytes.Count(b, []byte("\n")) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the coalesced record was never written")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if recs := readAudit(t, path); recs[1].Count != 2 {
		t.Errorf("second record %+v, want a count of 2", recs[1])
	}
}

// TestAuditRotatesAtItsQuota: the file never passes MaxBytes, one
// previous file is kept, and seq runs on across the rotation.
func TestAuditRotatesAtItsQuota(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, _ := openTestAudit(t, path, Limits{MaxBytes: minAuditMaxBytes})
	args := []byte(`{"x":"` + strings.Repeat("a", 1000) + `"}`)
	const n = 200
	for i := range n {
		if err := a.Record("capture_status", "1", flooder, OutcomeOK, 0, args, ""); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	a.Close()
	cur, prev := readAudit(t, path), readAudit(t, path+".1")
	for _, p := range []string{path, path + ".1"} {
		if st, _ := os.Stat(p); st.Size() > minAuditMaxBytes {
			t.Errorf("%s is %d bytes, over its quota %d", p, st.Size(), minAuditMaxBytes)
		}
	}
	if cur[0].Seq != prev[len(prev)-1].Seq+1 || cur[len(cur)-1].Seq != n {
		t.Errorf("seq %d..%d in PATH.1, %d..%d in PATH: want one run ending at %d", prev[0].Seq, prev[len(prev)-1].Seq, cur[0].Seq, cur[len(cur)-1].Seq, n)
	}
	// A restart numbers on from the file.
	b, _ := Open(path, Limits{MaxBytes: minAuditMaxBytes})
	b.Record("capture_status", "1", flooder, OutcomeOK, 0, nil, "")
	b.Close()
	if recs := readAudit(t, path); recs[len(recs)-1].Seq != n+1 {
		t.Errorf("after a restart the next seq is %d, want %d", recs[len(recs)-1].Seq, n+1)
	}
}

// TestAuditCutsATornTailAtOpen: a record cut mid-line by a crash is
// removed at open, said so in a record, and numbering continues.
func TestAuditCutsATornTailAtOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	whole := `{"seq":41,"ts":"x","tool":"t","id":"1","caller":{"transport":"stdio"},"outcome":"ok","elapsed_ms":0,"args":"","error":null}` + "\n"
	if err := os.WriteFile(path, []byte(whole+`{"seq":42,"ts":"x","to`), 0o600); err != nil {
		t.Fatal(err)
	}
	a, _ := openTestAudit(t, path, Limits{})
	a.Record("capture_status", "2", flooder, OutcomeOK, 0, nil, "")
	a.Close()
	recs := readAudit(t, path)
	if len(recs) != 3 || recs[1].Outcome != OutcomeAuditRecovered || recs[1].Seq != 42 || recs[2].Seq != 43 {
		t.Errorf("records %+v: want the whole one, a recovery note (42) and the new call (43)", recs)
	}
}

// TestAuditOnAFullDisk fills a real tmpfs while records are written:
// every line left is whole, the records not written left a gap in seq,
// and once there is room again an audit_gap record counts them.
func TestAuditOnAFullDisk(t *testing.T) {
	dir := tmpfs.Mount(t, 64<<10)
	path := filepath.Join(dir, "audit.jsonl")
	a, _ := openTestAudit(t, path, Limits{MaxBytes: 1 << 20})
	args := []byte(`{"x":"` + strings.Repeat("a", 700) + `"}`)
	filler := tmpfs.Fill(t, dir, "filler")
	os.Truncate(filler, 0)
	os.Remove(filler)
	tmpfs.Fill(t, dir, "filler-2") // full again, with the audit file open and empty
	os.Remove(filepath.Join(dir, "filler-2"))
	keep := tmpfs.Fill(t, dir, "filler-3")
	// Free a little under three pages: records fit, then one is cut short.
	if err := os.Truncate(keep, max(fileSize(t, keep)-3*4096+512, 0)); err != nil {
		t.Fatal(err)
	}
	written, failed := 0, 0
	for range 40 {
		if err := a.Record("capture_status", "1", flooder, OutcomeOK, 0, args, ""); err != nil {
			failed++
		} else {
			written++
		}
	}
	if written == 0 || failed == 0 {
		t.Fatalf("%d written, %d failed: the disk did not fill mid-run", written, failed)
	}
	b, _ := os.ReadFile(path)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("the file ends mid-record: %q", b[max(len(b)-40, 0):])
	}
	os.Remove(keep)
	if err := a.Record("capture_status", "1", flooder, OutcomeOK, 0, args, ""); err != nil {
		t.Fatalf("record after freeing space: %v", err)
	}
	a.Close()
	recs := readAudit(t, path) // fails on a torn line
	gap := recs[len(recs)-2]
	if gap.Outcome != OutcomeAuditGap || gap.Count != uint64(failed) || gap.Error == nil || !strings.Contains(*gap.Error, "no space") {
		t.Errorf("gap record %+v, want a count of %d and the reason", gap, failed)
	}
	if last := recs[len(recs)-1]; last.Seq != uint64(written+failed+2) || gap.Seq != last.Seq-1 || recs[written-1].Seq != uint64(written) {
		t.Errorf("seq: last written %d, gap %d, last %d; want %d missing numbers between", recs[written-1].Seq, gap.Seq, last.Seq, failed)
	}
	if a.Failures() != uint64(failed) {
		t.Errorf("Failures() = %d, want %d", a.Failures(), failed)
	}
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// giveUpTest bounds a wait for something that must happen; it is not a
// measurement.
const giveUpTest = 30 * time.Second

func readAudit(t *testing.T, path string) []Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// TestAuditFileIsPrivate: the file is created 0600, since it holds
// tool arguments.
func TestAuditFileIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := Open(path, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if st, _ := os.Stat(path); st.Mode().Perm() != auditFileMode {
		t.Errorf("audit file mode %v, want %v", st.Mode().Perm(), os.FileMode(auditFileMode))
	}
}

func TestOpenAuditFailsOnABadPath(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "no", "such", "dir", "a.jsonl"), Limits{}); err == nil {
		t.Error("an unopenable audit path was accepted")
	}
}

func TestAuditTokenID(t *testing.T) {
	cases := []struct{ in, want string }{
		{in: "ci-runner-1", want: "ci-runner-1"},
		{in: "a b\"c\nd", want: "a%20b%22c%0Ad"},
		{in: strings.Repeat("x", 70), want: strings.Repeat("x", maxAuditTokenID) + auditCutMark},
	}
	for _, tc := range cases {
		if got := auditTokenID(tc.in); got != tc.want {
			t.Errorf("auditTokenID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
