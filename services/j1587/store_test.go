package j1587

import (
	"bufio"
	"encoding/hex"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/services/ring"
	"fieldtap/tools/refdata"
)

func newStore(t testing.TB) *Port {
	t.Helper()
	st, err := New(ring.Limits{Items: 50_000, Bytes: 50_000 * MessageBytes()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Port("j1708")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// loadLog feeds a J1708 text log into s. services/ may not import the
// driver that reads the format, so this test has its own small reader.
func loadLog(t *testing.T, s *Port, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			t.Fatalf("line %q", sc.Text())
		}
		secs, err := strconv.ParseFloat(strings.Trim(fields[0], "()"), 64)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := hex.DecodeString(fields[2])
		if err != nil {
			t.Fatal(err)
		}
		s.Add(time.Unix(0, int64(math.Round(secs*1e6))*1e3).UTC(), msg, fields[1] == "j2497")
		n++
	}
	return n
}

// TestSchoolBusReference reproduces PROVENANCE.md's answers for the real
// school bus capture.
func TestSchoolBusReference(t *testing.T) {
	s := newStore(t)
	if n := loadLog(t, s, refdata.File(t, "j1708", "jdaily_schoolbus_vspy.j1708")); n != 10018 {
		t.Fatalf("lines = %d, want 10018", n)
	}
	sum := s.Summary()
	if sum.Messages != 10018 || sum.ChecksumOK != 10008 || sum.ChecksumBad != 10 {
		t.Errorf("messages/ok/bad = %d/%d/%d, want 10018/10008/10", sum.Messages, sum.ChecksumOK, sum.ChecksumBad)
	}
	if sum.ByStatus["truncated_parameter"] != 0 || sum.ByStatus["bad_page_extension"] != 0 {
		t.Errorf("J1587 parse errors on valid messages: %v", sum.ByStatus)
	}
	mids := map[int]uint64{}
	for _, m := range sum.MIDs {
		mids[m.MID] = m.Messages
	}
	for mid, want := range map[int]uint64{84: 3, 128: 9923, 136: 91, 247: 1} {
		if mids[mid] != want {
			t.Errorf("MID %d messages = %d, want %d", mid, mids[mid], want)
		}
	}
	counts := map[[2]int]uint64{}
	vals := map[[2]int]ParamValue{}
	for _, p := range s.Parameters(Any) {
		counts[[2]int{p.MID, p.PID}] = p.Count
		vals[[2]int{p.MID, p.PID}] = p
	}
	for _, c := range [][3]int{{128, 2, 3409}, {128, 84, 4961}, {128, 86, 5024}, {128, 110, 496}, {128, 190, 4961}, {128, 194, 496}, {128, 245, 63}, {136, 128, 168}} {
		if got := counts[[2]int{c[0], c[1]}]; got != uint64(c[2]) {
			t.Errorf("(MID %d, PID %d) count = %d, want %d", c[0], c[1], got, c[2])
		}
	}
	if len(counts) != 27 {
		t.Errorf("(MID, PID) pairs = %d, want 27", len(counts))
	}
	ranges := []struct {
		pid    int
		lo, hi float64
		n      uint64
		unit   string
	}{
		{pid: 84, lo: 0, hi: 28, n: 4961, unit: "mph"},
		{pid: 91, lo: 0, hi: 2.8, n: 4961, unit: "%"},
		{pid: 92, lo: 0, hi: 99.5, n: 4961, unit: "%"},
		{pid: 100, lo: 0, hi: 30, n: 496, unit: "psi"},
		{pid: 110, lo: 149, hi: 154, n: 496, unit: "degF"},
		{pid: 168, lo: 3.5, hi: 14.25, n: 496, unit: "V"},
		{pid: 190, lo: 0, hi: 711.75, n: 4961, unit: "rpm"},
		{pid: 245, lo: 214213.6, hi: 214213.7, n: 63, unit: "mi"},
	}
	for _, r := range ranges {
		t.Run("PID "+strconv.Itoa(r.pid), func(t *testing.T) {
			v := vals[[2]int{128, r.pid}]
			if v.Min == nil || math.Abs(*v.Min-r.lo) > 1e-6 || math.Abs(*v.Max-r.hi) > 1e-6 || v.NumberCount != r.n || v.Unit != r.unit {
				t.Errorf("got min %v max %v n %d %s, want %v..%v n %d %s", v.Min, v.Max, v.NumberCount, v.Unit, r.lo, r.hi, r.n, r.unit)
			}
		})
	}
	if f := s.Faults(); len(f) != 0 {
		t.Errorf("faults = %+v, want none (every PID 194 table is empty)", f)
	}
	if ft := s.FaultTables(); ft[128].IsZero() {
		t.Error("MID 128's empty fault tables were not recorded")
	}
}

func TestCANarchySamples(t *testing.T) {
	tests := []struct {
		file          string
		messages, bad uint64
	}{
		{file: "canarchy_j1708_sample.j1708", messages: 7, bad: 1},
		{file: "canarchy_j2497_sample.j2497", messages: 6, bad: 1},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			s := newStore(t)
			loadLog(t, s, refdata.File(t, "j1708", tc.file))
			sum := s.Summary()
			if sum.Messages != tc.messages || sum.ChecksumBad != tc.bad {
				t.Errorf("messages/bad = %d/%d, want %d/%d", sum.Messages, sum.ChecksumBad, tc.messages, tc.bad)
			}
		})
	}
}

func TestFaultTableLifecycle(t *testing.T) {
	s := newStore(t)
	t0 := time.Unix(1000, 0)
	// MID 128: PID 110 FMI 0 active with count 2, SID 2 FMI 12 inactive.
	s.Add(t0, withSum(0x80, 194, 5, 110, 0x80, 2, 2, 0x60|12), false)
	f := s.Faults()
	if len(f) != 2 || !f[0].Listed {
		t.Fatalf("faults = %+v", f)
	}
	byCode := map[int]FaultEntry{}
	for _, e := range f {
		byCode[e.Code] = e
	}
	if e := byCode[110]; !e.Active || e.IsSID || e.Count == nil || *e.Count != 2 || e.CodeName != "engine coolant temperature" {
		t.Errorf("PID 110 fault = %+v", e)
	}
	if e := byCode[2]; e.Active || !e.IsSID || e.Count != nil || e.FMI != 12 {
		t.Errorf("SID 2 fault = %+v", e)
	}
	// An empty table clears both from the listing; the history stays.
	s.Add(t0.Add(time.Second), withSum(0x80, 194, 0), false)
	for _, e := range s.Faults() {
		if e.Listed || e.Active {
			t.Errorf("after an empty table: %+v", e)
		}
	}
	if sum := s.Summary(); sum.MIDs[0].ActiveFaults != 0 {
		t.Errorf("active faults = %d", sum.MIDs[0].ActiveFaults)
	}
}

func TestMultisectionReassembly(t *testing.T) {
	s := newStore(t)
	t0 := time.Unix(1000, 0)
	vin := []byte("1HGBH41JXMN109186")
	full := append([]byte{byte(len(vin))}, vin...)
	// Three sections of PID 237, each carried as PID 192 in its own message.
	parts := [][]byte{full[:6], full[6:12], full[12:]}
	for i, p := range parts {
		body := append([]byte{0xAC, 192, byte(3 + len(p)), 237, byte(i), 2}, p...)
		s.Add(t0.Add(time.Duration(i)*time.Millisecond), withSum(body...), false)
	}
	var got *ParamValue
	for _, p := range s.Parameters(0xAC) {
		if p.PID == PIDVIN {
			got = &p
		}
	}
	if got == nil || got.Text != string(vin) || !got.TextUntrusted {
		t.Fatalf("VIN = %+v, want %q marked untrusted", got, vin)
	}
	// A section out of order is counted, not joined.
	s.Add(t0, withSum(0xAC, 192, 4, 237, 1, 2, 'X'), false)
	if s.Summary().Overflow.SectionErrors != 1 {
		t.Errorf("overflow = %+v", s.Summary().Overflow)
	}
}

func TestLatestTableIsBounded(t *testing.T) {
	s := newStore(t)
	t0 := time.Unix(1000, 0)
	for mid := 128; mid < 256; mid++ {
		for pid := 0; pid < 64; pid++ {
			s.Add(t0, withSum(byte(mid), byte(pid), 1), false)
		}
	}
	sum := s.Summary()
	if want := uint64(128*64 - maxLatest); sum.Overflow.Latest != want {
		t.Errorf("latest overflow = %d, want %d", sum.Overflow.Latest, want)
	}
	if n := len(s.Parameters(Any)); n != maxLatest {
		t.Errorf("parameters = %d, want the bound %d", n, maxLatest)
	}
}

func TestSelection(t *testing.T) {
	s := newStore(t)
	t0 := time.Unix(1000, 0)
	for i := range 25 {
		mid := byte(0x80)
		if i%5 == 0 {
			mid = 0x88
		}
		s.Add(t0.Add(time.Duration(i)*time.Millisecond), withSum(mid, 84, byte(i)), false)
	}
	s.Add(t0.Add(time.Second), withSum(0x00, 0x01), false)       // MID 0, a J1708-reserved layout
	s.Add(t0.Add(time.Second), withSum(0x80, 0x00, 0x54), false) // PID 0 (request) for PID 84
	s.Add(t0.Add(time.Second), []byte{0x80, 0x54, 0x00}, false)  // bad checksum: carries no PID
	mid := func(m byte) *byte { return &m }
	pid := func(p uint16) *uint16 { return &p }
	cases := []struct {
		name string
		sel  Selection
		want int
	}{
		{name: "everything", sel: Selection{}, want: 28},
		{name: "MID and PID", sel: Selection{MID: mid(0x80), PID: pid(84)}, want: 20},
		{name: "MID 0 is a MID", sel: Selection{MID: mid(0)}, want: 1},
		{name: "PID 0 is a PID", sel: Selection{PID: pid(0)}, want: 1},
		{name: "a PID nobody sent", sel: Selection{PID: pid(190)}, want: 0},
		{name: "since inclusive, until exclusive", sel: Selection{Since: t0.Add(5 * time.Millisecond), Until: t0.Add(10 * time.Millisecond)}, want: 5},
		{name: "time and MID", sel: Selection{MID: mid(0x88), Until: t0.Add(10 * time.Millisecond)}, want: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.sel.Selector()
			n := 0
			s.Messages().Range(0, func(_ uint64, r Record) bool {
				if m.Match(&r) {
					n++
				}
				return true
			})
			if n != tc.want {
				t.Errorf("matched %d, want %d", n, tc.want)
			}
		})
	}
	var dec Decoder
	snap := s.Messages()
	last, _ := snap.Get(snap.EndSeq() - 1)
	req, _ := snap.Get(snap.EndSeq() - 2)
	if got := last.PIDs(&dec); len(got) != 0 {
		t.Errorf("a bad-checksum message carries PIDs %v", got)
	}
	if got := req.PIDs(&dec); len(got) != 1 || got[0] != 0 {
		t.Errorf("PIDs %v, want [0]", got)
	}
}

func BenchmarkStoreAdd(b *testing.B) {
	s := newStore(b)
	msg := mustHex(b, "80540056005B075C05BB0000BEF70A99")
	t0 := time.Unix(1000, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Add(t0.Add(time.Duration(i)), msg, false)
	}
}

// BenchmarkSelection matches a full default ring by PID, which decodes
// every message: the cost of counting one j1708_messages page.
func BenchmarkSelection(b *testing.B) {
	st, err := New(ring.Limits{Items: DefaultMaxMessages, Bytes: DefaultMaxMessages * MessageBytes()})
	if err != nil {
		b.Fatal(err)
	}
	s, err := st.Port("j1708")
	if err != nil {
		b.Fatal(err)
	}
	msg := mustHex(b, "80540056005B075C05BB0000BEF70A99")
	t0 := time.Unix(1000, 0)
	for i := range DefaultMaxMessages {
		s.Add(t0.Add(time.Duration(i)), msg, false)
	}
	pid := uint16(PIDEngineSpeed)
	m := Selection{PID: &pid}.Selector()
	snap := s.Messages()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		snap.Range(0, func(_ uint64, r Record) bool {
			if m.Match(&r) {
				n++
			}
			return true
		})
		if n != DefaultMaxMessages {
			b.Fatalf("matched %d", n)
		}
	}
}
