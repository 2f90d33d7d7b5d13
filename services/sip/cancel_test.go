package sip

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"

	"fieldtap/board/sim/sipgen"
	"fieldtap/services/netdecode"
	"fieldtap/tools/refdata"
)

// cancelledCheck holds a store to what a cancelled call is: every dialog
// list_dialogs shows cancelled is cancelled by triage_call too, no
// cancelled attempt is a `failed` problem, find_problems' attempt rows say
// cancelled, and the timeline counts it apart from the failures. It
// returns the attempts judged cancelled.
func cancelledCheck(t *testing.T, sn *Snapshot) int {
	t.Helper()
	cancelled := 0
	for _, d := range sn.Dialogs {
		tr := TriageCall(d)
		if d.State == StateCancelled && tr.Outcome != OutcomeCancelled {
			t.Errorf("%s: list_dialogs says %s, triage_call %s", d.CallID, d.State, tr.Outcome)
		}
		for _, a := range tr.Attempts {
			if a.Outcome != OutcomeCancelled {
				continue
			}
			cancelled++
			if a.FinalCode != 487 || !a.Cancelled {
				t.Errorf("%s attempt %d: cancelled with final %d, CANCEL seen %v", d.CallID, a.N, a.FinalCode, a.Cancelled)
			}
		}
		for _, p := range AttemptProblems(d, CompiledProblems(), ProblemNames()) {
			if p.Outcome == OutcomeCancelled && slices.Contains(p.Problems, "failed") {
				t.Errorf("%s attempt %d: cancelled, yet find_problems calls it failed", d.CallID, p.Attempt)
			}
		}
	}
	all := func(*Dialog) bool { return true }
	tl, _, err := Timeline(sn.Dialogs, all, []time.Duration{time.Hour}, time.Time{}, time.Time{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	inTimeline := 0
	for _, b := range tl {
		inTimeline += b.Cancelled
	}
	if inTimeline != cancelled {
		t.Errorf("timeline counts %d cancelled attempts, triage %d", inTimeline, cancelled)
	}
	return cancelled
}

// TestCancelledGeneratedCalls: sipgen's cancelled call (INVITE, 100, 180,
// CANCEL, 200, 487, ACK; one in every six) is cancelled in every answer,
// and the call figures count it as the standards do: an attempt that was
// not answered (ASR), ended at the user, not in the network (NER).
func TestCancelledGeneratedCalls(t *testing.T) {
	st := newStore(t, Limits{})
	a := NewAnalyser(st, netdecode.Options{})
	o := sipgen.Options{Seed: 7, Start: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC), Duration: 2 * time.Minute, Calls: 60}
	if err := sipgen.Generate(o, func(p sipgen.Packet) error {
		a.Feed(p.Time, wire.LinkEthernet, p.Data)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sn := st.Snapshot()
	const wantCancelled = 10 // one call in six
	if got := cancelledCheck(t, sn); got != wantCancelled {
		t.Errorf("%d attempts cancelled, want %d", got, wantCancelled)
	}
	failed := 0
	for _, d := range sn.Dialogs {
		if AnyProblem(d, ProblemMask([]string{"failed"})) {
			failed++
		}
	}
	if failed != 20 { // the busy and the wrong number of each six
		t.Errorf("find_problems failed: %d dialogs, want 20", failed)
	}
	m := GroupMetrics(sn.Dialogs, func(*Dialog) bool { return true }, "method", 10).Overall
	if m.Attempts != 60 || m.Answered != 30 || *m.ASR.Value != 30.0/60 || *m.NER.Value != 50.0/60 {
		t.Errorf("attempts %d answered %d ASR %v NER %v, want 60, 30, 0.5 and 50/60 (answered, busy and cancelled)",
			m.Attempts, m.Answered, *m.ASR.Value, *m.NER.Value)
	}
}

// TestCancelledReferenceCaptures runs every capture in ../shared/testdata/sip
// through cancelledCheck and, with tshark on PATH, counts as cancelled
// exactly the INVITE transactions (Call-ID and CSeq number) tshark shows
// with a CANCEL and a 487. PROVENANCE.md lists aaa.pcap with 11 CANCELs
// and DTMFsipinfo.pcap with 2, whose 200 OKs won the race: answered.
func TestCancelledReferenceCaptures(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	files, _ := filepath.Glob(filepath.Join(dir, "*.pcap*"))
	if len(files) == 0 {
		t.Skip("no capture in " + dir)
	}
	_, lookErr := exec.LookPath("tshark")
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			st, _ := loadCapture(t, path)
			sn := st.Snapshot()
			got := cancelledCheck(t, sn)
			t.Logf("%d CANCEL requests, %d attempts cancelled", sn.Stats.Requests["CANCEL"], got)
			if lookErr != nil {
				t.Skip("tshark not on PATH (apt-get install tshark): cancelled INVITEs not counted independently")
			}
			cancels, terminated := tsharkCancels(t, path)
			if uint64(len(cancels)) > sn.Stats.Requests["CANCEL"] {
				t.Errorf("%d distinct CANCELs in tshark, %d CANCEL requests counted", len(cancels), sn.Stats.Requests["CANCEL"])
			}
			want := 0
			for k := range terminated {
				if cancels[k] {
					want++
				}
			}
			if got != want {
				t.Errorf("%d attempts cancelled, tshark shows %d INVITEs with a CANCEL and a 487", got, want)
			}
		})
	}
}

// tsharkCancels returns, as "Call-ID CSeq-number", the CANCELs tshark
// sees in path and the INVITEs answered 487.
func tsharkCancels(t *testing.T, path string) (cancels, terminated map[string]bool) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("tshark", "-n", "-r", path, "-Y", `sip.Method == "CANCEL" || (sip.CSeq.method == "INVITE" && sip.Status-Code == 487)`,
		"-T", "fields", "-E", "occurrence=f", "-e", "sip.Method", "-e", "sip.Call-ID", "-e", "sip.CSeq.seq")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.String())
	}
	cancels, terminated = map[string]bool{}, map[string]bool{}
	for line := range strings.Lines(string(out)) {
		switch f := strings.Split(strings.TrimRight(line, "\n"), "\t"); {
		case len(f) != 3:
		case f[0] == "CANCEL":
			cancels[f[1]+" "+f[2]] = true
		case f[0] == "":
			terminated[f[1]+" "+f[2]] = true
		}
	}
	return cancels, terminated
}
