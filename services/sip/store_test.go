package sip

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"fieldtap/tools/refdata"
)

func addRaw(t testing.TB, st *Store, at time.Time, raw string) {
	t.Helper()
	var m Parsed
	if err := m.Parse([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	st.Add(Meta{Time: at, Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("192.0.2.2:5060"), Transport: TransportUDP}, &m, []byte(raw))
}

func req(method, callID string, cseq int) string {
	return fmt.Sprintf("%s sip:b@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:alice@h>;tag=1\r\nTo: <sip:bob@h>\r\nCall-ID: %s\r\nCSeq: %d %s\r\n\r\n", method, cseq, callID, cseq, method)
}

func resp(code int, method, callID string, cseq int) string {
	return fmt.Sprintf("SIP/2.0 %d X\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:alice@h>;tag=1\r\nTo: <sip:bob@h>;tag=9\r\nCall-ID: %s\r\nCSeq: %d %s\r\n\r\n", code, cseq, callID, cseq, method)
}

func TestDialogEviction(t *testing.T) {
	st := newStore(t, Limits{Dialogs: 3, MessagesPerDialog: 2})
	t0 := time.Unix(100, 0)
	for i := range 5 {
		addRaw(t, st, t0.Add(time.Duration(i)*time.Second), req("OPTIONS", fmt.Sprint("c", i), 1))
	}
	for range 3 {
		addRaw(t, st, t0.Add(10*time.Second), req("OPTIONS", "c4", 2))
	}
	sn := st.Snapshot()
	if len(sn.Dialogs) != 3 || sn.Stats.DialogsEvicted != 2 || sn.Dialogs[0].CallID != "c2" {
		t.Fatalf("dialogs %d evicted %d first %s", len(sn.Dialogs), sn.Stats.DialogsEvicted, sn.Dialogs[0].CallID)
	}
	d := sn.Lookup("c4")
	if d.MessagesKept != 2 || d.MessagesShed != 2 || sn.Stats.MessagesShed != 2 {
		t.Errorf("kept %d shed %d", d.MessagesKept, d.MessagesShed)
	}
	if d.Retransmits != 2 {
		t.Errorf("retransmits %d, want 2 (CSeq 2 sent three times)", d.Retransmits)
	}
	// An old snapshot does not change under later updates.
	addRaw(t, st, t0.Add(20*time.Second), req("OPTIONS", "c4", 3))
	if sn.Lookup("c4").Requests != 4 || st.Snapshot().Lookup("c4").Requests != 5 {
		t.Error("snapshot is not isolated from later updates")
	}
}

func TestDialogStates(t *testing.T) {
	t0 := time.Unix(0, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type step struct {
		at  int
		raw string
	}
	tests := []struct {
		name  string
		steps []step
		state string
		final int
		pdd   time.Duration
	}{
		{name: "answered and ended", steps: []step{{0, req("INVITE", "a", 1)}, {100, resp(180, "INVITE", "a", 1)}, {900, resp(200, "INVITE", "a", 1)}, {950, req("ACK", "a", 1)}, {5000, req("BYE", "a", 2)}},
			state: StateEnded, final: 200, pdd: 100 * time.Millisecond},
		{name: "busy", steps: []step{{0, req("INVITE", "b", 1)}, {10, resp(100, "INVITE", "b", 1)}, {20, resp(486, "INVITE", "b", 1)}},
			state: StateFailed, final: 486},
		{name: "cancelled", steps: []step{{0, req("INVITE", "c", 1)}, {50, resp(180, "INVITE", "c", 1)}, {60, req("CANCEL", "c", 1)}, {70, resp(487, "INVITE", "c", 1)}},
			state: StateCancelled, final: 487, pdd: 50 * time.Millisecond},
		{name: "auth then answered", steps: []step{{0, req("INVITE", "d", 1)}, {5, resp(401, "INVITE", "d", 1)}, {10, req("INVITE", "d", 2)}, {20, resp(200, "INVITE", "d", 2)}},
			state: StateAnswered, final: 200},
		{name: "failed re-INVITE keeps the answer", steps: []step{{0, req("INVITE", "e", 1)}, {20, resp(200, "INVITE", "e", 1)}, {30, req("INVITE", "e", 2)}, {40, resp(491, "INVITE", "e", 2)}},
			state: StateAnswered, final: 200},
		{name: "register", steps: []step{{0, req("REGISTER", "f", 1)}, {20, resp(200, "REGISTER", "f", 1)}},
			state: StateCompleted, final: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t, Limits{})
			for _, s := range tc.steps {
				addRaw(t, st, ms(s.at), s.raw)
			}
			d := st.Snapshot().Dialogs[0]
			if d.State != tc.state || d.FinalCode != tc.final {
				t.Errorf("state %s final %d, want %s %d", d.State, d.FinalCode, tc.state, tc.final)
			}
			if pdd, _ := d.PDD(); pdd != tc.pdd {
				t.Errorf("pdd %v, want %v", pdd, tc.pdd)
			}
		})
	}
}

func TestProblemAliasesCompile(t *testing.T) {
	if len(CompiledProblems()) != len(ProblemNames()) {
		t.Fatal("alias count mismatch")
	}
}

func TestCaptureOutcomes(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	tests := []struct {
		file   string
		states map[string]int
	}{
		{file: "sip-488-Not-Acceptable-Here-codec-null.pcapng", states: map[string]int{StateFailed: 1, StateCompleted: 3}},
		{file: "SIP_CALL_RTP_G711.pcap", states: map[string]int{StateAnswered: 1, StateEarly: 1, StateCompleted: 2}},
		{file: "DTMFsipinfo.pcap", states: map[string]int{StateAnswered: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			st, _ := loadCapture(t, filepath.Join(dir, tc.file))
			got := map[string]int{}
			for _, d := range st.Snapshot().Dialogs {
				got[d.State]++
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.states) {
				t.Errorf("states %v, want %v", got, tc.states)
			}
		})
	}
}

func BenchmarkLoadBranchScenario(b *testing.B) {
	path := filepath.Join(refdata.Dir(b, "sip"), "branch-scenario-sipp.pcapng")
	b.ReportAllocs()
	for b.Loop() {
		loadCapture(b, path)
	}
}

func newStore(tb testing.TB, l Limits) *Store {
	tb.Helper()
	s, err := New(l)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestSnapshotMessagesKeepTheirRaw: the store fills evicted raw slabs
// again while nobody reads, but never one a snapshot can show: every
// message a snapshot holds reads as it was stored after thousands more.
func TestSnapshotMessagesKeepTheirRaw(t *testing.T) {
	st := newStore(t, Limits{Dialogs: 200, MessagesPerDialog: 4})
	t0 := time.Unix(100, 0)
	raw := func(i int) string { return req("OPTIONS", fmt.Sprint("call-", i), i+1) }
	n := 0
	for ; n < 400; n++ {
		addRaw(t, st, t0.Add(time.Duration(n)*time.Millisecond), raw(n))
	}
	snap := st.Snapshot()
	want := map[uint64]string{}
	snap.RangeMessages(0, func(m *Message) bool { want[m.Seq] = string(m.Raw); return true })
	for ; n < 10000; n++ {
		addRaw(t, st, t0.Add(time.Duration(n)*time.Millisecond), raw(n))
	}
	got := 0
	snap.RangeMessages(0, func(m *Message) bool {
		if string(m.Raw) != want[m.Seq] {
			t.Fatalf("message %d of the snapshot now reads %.60q, stored as %.60q", m.Seq, m.Raw, want[m.Seq])
		}
		got++
		return true
	})
	if got == 0 || got != len(want) {
		t.Fatalf("the snapshot shows %d messages, %d when taken", got, len(want))
	}
	st.Snapshot().RangeMessages(0, func(m *Message) bool {
		if want := raw(int(m.Seq)); string(m.Raw) != want {
			t.Fatalf("message %d reads %.60q, want %.60q", m.Seq, m.Raw, want)
		}
		return true
	})
}
