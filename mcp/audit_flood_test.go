package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"fieldtap/tools/tmpfs"
)

// fakeClock is an Audit clock a test moves by hand.
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

func openTestAudit(t *testing.T, path string, l AuditLimits) (*Audit, *fakeClock) {
	t.Helper()
	a, err := OpenAudit(path, l)
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	a.now = clk.now
	return a, clk
}

// accounted sums the calls the records stand for, by outcome.
func accounted(recs []AuditRecord) map[string]uint64 {
	m := map[string]uint64{}
	for _, r := range recs {
		m[r.Outcome] += max(r.Count, 1)
	}
	return m
}

var flooder = Caller{Transport: "http", Peer: "10.0.0.9", TokenID: "reader"}

// TestAuditCoalescesAFloodOfRefusals: a caller's refusals past its
// allowance in a window are one record that counts them; another caller
// keeps its own allowance; the next window starts again.
func TestAuditCoalescesAFloodOfRefusals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, clk := openTestAudit(t, path, AuditLimits{})
	args := []byte(`{"x":"` + strings.Repeat("a", 1000) + `"}`)
	const flood = 5000
	for range flood {
		if err := a.Record("no_such_tool", "7", flooder, OutcomeRefused, 0, args, "rate limited"); err != nil {
			t.Fatal(err)
		}
	}
	other := Caller{Transport: "http", Peer: "10.0.0.10", TokenID: "reader"}
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
	if want := DefaultAuditRefusalsPerWindow + 3; len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	g := recs[DefaultAuditRefusalsPerWindow+1]
	if g.Count != flood-DefaultAuditRefusalsPerWindow || g.Caller.Peer != flooder.Peer || g.Since == "" || len(g.Tools) != 1 || g.Tools[0] != "no_such_tool" || g.Args != "" {
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
	a, err := OpenAudit(path, AuditLimits{RefusalsPerWindow: 1})
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
	a, _ := openTestAudit(t, path, AuditLimits{MaxBytes: minAuditMaxBytes})
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
	b, _ := OpenAudit(path, AuditLimits{MaxBytes: minAuditMaxBytes})
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
	a, _ := openTestAudit(t, path, AuditLimits{})
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
	a, _ := openTestAudit(t, path, AuditLimits{MaxBytes: 1 << 20})
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

// TestAuditFailurePolicy: with the file unwritable, a call that did work
// is withheld (AUDIT_FAILED) but a refusal is still answered as itself.
func TestAuditFailurePolicy(t *testing.T) {
	a, err := OpenAudit(filepath.Join(t.TempDir(), "audit.jsonl"), AuditLimits{})
	if err != nil {
		t.Fatal(err)
	}
	a.file.f.Close() // the descriptor fails every write, as a dead disk does; Close was not called
	d := testDeps()
	mw := audited(d, a, nil)
	refuse := mw(func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return fail(SourceInfo{}, CodeForbidden, "needs the transmit scope", "use another token"), nil
	})
	work := mw(func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return rendered([]byte(`{"ok":true}`), true, ""), nil
	})
	code := func(res *mcpgo.CallToolResult) string {
		var f Failure
		json.Unmarshal(res.RawStructuredContent, &f)
		if len(f.Errors) == 0 {
			return ""
		}
		return f.Errors[0].Code
	}
	res, _ := refuse(context.Background(), mcpgo.CallToolRequest{})
	if got := code(res); got != CodeForbidden {
		t.Errorf("refusal answered %s, want %s", got, CodeForbidden)
	}
	res, _ = work(context.Background(), mcpgo.CallToolRequest{})
	if got := code(res); got != CodeAuditFailed {
		t.Errorf("a call that did work answered %q, want %s", got, CodeAuditFailed)
	}
}

// TestAuditRecordsCancelledCalls: a call whose context ended before it
// returned is recorded cancelled, whatever it answered.
func TestAuditRecordsCancelledCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path, AuditLimits{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := audited(testDeps(), a, nil)(func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		cancel()
		<-ctx.Done()
		return rendered([]byte(`{"ok":true}`), true, ""), nil
	})
	h(ctx, mcpgo.CallToolRequest{})
	a.Close()
	if recs := readAudit(t, path); len(recs) != 1 || recs[0].Outcome != OutcomeCancelled || recs[0].Error == nil {
		t.Errorf("records %+v, want one cancelled", recs)
	}
	if err := a.Record("x", "1", flooder, OutcomeOK, 0, nil, ""); err == nil {
		t.Error("a record after Close succeeded")
	}
}
