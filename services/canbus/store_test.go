package canbus

import (
	"reflect"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/ring"
)

func TestFrameBits(t *testing.T) {
	tests := []struct {
		name string
		ext  bool
		n    int
		want int
	}{
		{name: "std 8 bytes", n: 8, want: 135},
		{name: "ext 8 bytes", ext: true, n: 8, want: 160},
		{name: "std empty", n: 0, want: 55},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FrameBits(tc.ext, tc.n); got != tc.want {
				t.Errorf("FrameBits = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPortTablesAndBounds(t *testing.T) {
	s, err := New(ring.Limits{Items: 10, Bytes: 10 * FrameBytes()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Port("can0", 250_000)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(100, 0)
	p.Add(t0, 0x18FEF100|wire.CANEFF, []byte{1, 2, 3})
	p.Add(t0.Add(500*time.Millisecond), 0x18FEF100|wire.CANEFF, []byte{1, 2, 7})
	p.Add(t0.Add(1500*time.Millisecond), 0x123, []byte{9})
	ids := p.IDs()
	if len(ids) != 2 {
		t.Fatalf("ids = %+v", ids)
	}
	var j IDStats
	for _, x := range ids {
		if x.Extended {
			j = x
		}
	}
	if j.Count != 2 || j.LastData != "010207" || len(j.ChangedByte) != 1 || j.ChangedByte[0] != 2 || j.ChangedBits != "0000040000000000" {
		t.Errorf("id row = %+v", j)
	}
	if r := j.Rate(); r == nil || *r != 2 {
		t.Errorf("rate = %v, want 2/s", r)
	}
	secs := p.Seconds()
	if len(secs) != 2 || secs[0].Frames != 2 || secs[0].Bits != uint64(2*FrameBits(true, 3)) {
		t.Errorf("seconds = %+v", secs)
	}
	for i := range 20 {
		p.Add(t0.Add(time.Duration(i)*time.Second), uint32(i), nil)
	}
	if st := p.Status(); st.Store.Items != 10 || st.Store.Evicted != 13 || st.Frames != 23 {
		t.Errorf("status = %+v", st)
	}
	for i := range MaxPorts + 1 {
		s.Port(string(rune('a'+i)), 0)
	}
	if _, err := s.Port("overflow", 0); err == nil {
		t.Error("ports must be bounded")
	}
}

func TestIDTableBounded(t *testing.T) {
	s, err := New(ring.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Port("can0", 0)
	for i := range MaxIDs + 5 {
		p.Add(time.Unix(0, 0), uint32(i)|wire.CANEFF, nil)
	}
	if st := p.Status(); st.DistinctIDs != MaxIDs || st.IDOverflow != 5 {
		t.Errorf("distinct %d overflow %d", st.DistinctIDs, st.IDOverflow)
	}
}

func TestAddAllIsAddEach(t *testing.T) {
	t0 := time.Unix(1_600_000_000, 0)
	var recs []Record
	for i := range 600 {
		r := Record{Time: t0.Add(time.Duration(i) * 7 * time.Millisecond), ID: uint32(i % 40)}
		switch i % 4 {
		case 1:
			r.ID |= 0x18FEF100 | wire.CANEFF
		case 2:
			r.ID |= wire.CANRTR
		case 3:
			r.ID = wire.CANERR | 4
		}
		r.Len = uint8(i % 9)
		for k := range r.Len {
			r.Data[k] = byte(i + int(k))
		}
		recs = append(recs, r)
	}
	each, _ := New(Limits{Items: 500, Bytes: 1 << 20})
	all, _ := New(Limits{Items: 500, Bytes: 1 << 20})
	pe, _ := each.Port("can0", 0)
	pa, _ := all.Port("can0", 0)
	for i := range recs {
		pe.Add(recs[i].Time, recs[i].ID, recs[i].Payload())
	}
	for i := 0; i < len(recs); i += 64 {
		pa.AddAll(recs[i:min(i+64, len(recs))])
	}
	if e, a := pe.Status(), pa.Status(); !reflect.DeepEqual(e, a) {
		t.Errorf("status: Add %+v, AddAll %+v", e, a)
	}
	if e, a := pe.IDs(), pa.IDs(); !reflect.DeepEqual(e, a) {
		t.Errorf("ids: Add %+v, AddAll %+v", e, a)
	}
	if e, a := pe.Seconds(), pa.Seconds(); !reflect.DeepEqual(e, a) {
		t.Errorf("seconds: Add %+v, AddAll %+v", e, a)
	}
	fe, fa := pe.Frames(), pa.Frames()
	if e, a := pe.FrameStats(), pa.FrameStats(); e.Items != a.Items || e.Evicted != a.Evicted || e.Bytes != a.Bytes || fe.FirstSeq() != fa.FirstSeq() {
		t.Errorf("frame rings: Add %+v, AddAll %+v", e, a)
	}
	fe.Range(0, func(seq uint64, r Record) bool {
		if got, _ := fa.Get(seq); got != r {
			t.Errorf("frame %d: Add %+v, AddAll %+v", seq, r, got)
		}
		return true
	})
}

// TestSecondsChargeLateFramesAndWrap checks the load history against the
// rule written out plainly: a frame opens a new second only when its
// truncated time is after the newest second's start, else the newest
// second takes it; loads are bits over the bitrate, in batches that end
// mid-second, across the history's wrap, before 1970 too.
func TestSecondsChargeLateFramesAndWrap(t *testing.T) {
	s, _ := New(Limits{Items: 100, Bytes: 1 << 20})
	p, _ := s.Port("can0", 500_000)
	var want []Second
	var recs []Record
	at := time.Unix(-3, 250_000_000)
	rnd := uint32(1)
	for i := range 10 * MaxSeconds {
		rnd = rnd*1664525 + 1013904223
		switch rnd >> 28 {
		case 0:
			at = at.Add(-1700 * time.Millisecond) // late: the newest second takes it
		case 1, 2, 3:
			at = at.Add(time.Duration(rnd>>8%3000) * time.Millisecond)
		default:
			at = at.Add(time.Duration(rnd>>8%40) * time.Millisecond)
		}
		r := Record{Time: at, ID: uint32(i % 50), Len: uint8(i % 9)}
		if i%3 == 0 {
			r.ID |= wire.CANEFF
		}
		recs = append(recs, r)
		bits := uint64(FrameBits(i%3 == 0, int(r.Len)))
		if n := len(want); n == 0 || at.Truncate(time.Second).After(want[n-1].Start) {
			want = append(want, Second{Start: at.Truncate(time.Second)})
		}
		w := &want[len(want)-1]
		w.Frames++
		w.Bits += bits
		w.Load = float64(w.Bits) / 500_000
	}
	for i := 0; i < len(recs); i += 77 {
		p.AddAll(recs[i:min(i+77, len(recs))])
	}
	if len(want) <= MaxSeconds {
		t.Fatalf("only %d seconds: the wrap is not exercised", len(want))
	}
	want = want[len(want)-MaxSeconds:]
	if got := p.Seconds(); !reflect.DeepEqual(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("second %d of %d: %+v, want %+v", i, len(got), got[i], want[i])
			}
		}
		t.Fatalf("%d seconds, want %d", len(got), len(want))
	}
}

// A record's bytes past its length are not the frame's: a producer
// reusing its records leaves an earlier frame's there, and they must not
// show as changed bits.
func TestBytesPastTheLengthAreNotData(t *testing.T) {
	s, err := New(Limits{Items: 100, Bytes: 100 * FrameBytes()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Port("can0", 250_000)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(100, 0)
	recs := []Record{
		{Time: t0, ID: 0x100, Len: 2, Data: [8]byte{1, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
		{Time: t0.Add(time.Millisecond), ID: 0x100, Len: 2, Data: [8]byte{1, 2}},
		{Time: t0.Add(2 * time.Millisecond), ID: 0x100, Len: 3, Data: [8]byte{1, 2, 0, 0xAA}},
	}
	p.AddAll(recs)
	ids := p.IDs()
	if len(ids) != 1 || ids[0].ChangedBits != "0000000000000000" || len(ids[0].ChangedByte) != 0 || ids[0].LastData != "010200" {
		t.Errorf("id row %+v: want no changed bits (the bytes past each length are not data) and last data 010200", ids)
	}
}
