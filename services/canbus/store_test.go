package canbus

import (
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
