package obdgen

import (
	"bufio"
	"bytes"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// The candump log holds Generate's frames, in order, and is the same on
// every run.
func TestWriteCandumpRoundTrips(t *testing.T) {
	o := Options{Start: time.Unix(1.7e9, 0)}
	var frames []Frame
	if err := Generate(o, func(f Frame) error { frames = append(frames, f); return nil }); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := WriteCandump(&a, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteCandump(&b, o); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("two runs differ (%v)", err)
	}
	sc := bufio.NewScanner(&a)
	var r wire.CandumpRecord
	i := 0
	for ; sc.Scan(); i++ {
		if err := wire.DecodeCandump(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d %q: %v", i+1, sc.Text(), err)
		}
		f := frames[i]
		id := f.ID
		if f.Extended {
			id |= wire.CANEFF
		}
		if r.ID != id || !bytes.Equal(r.Payload(), f.Data) || !r.Time.Equal(f.Time) {
			t.Errorf("line %d: %08X %X at %v, want %08X %X at %v", i+1, r.ID, r.Payload(), r.Time, id, f.Data, f.Time)
		}
	}
	if i != len(frames) {
		t.Errorf("%d lines, %d frames", i, len(frames))
	}
	if err := WriteCandump(&a, Options{Start: time.Unix(-1, 0)}); err == nil {
		t.Error("a start before 1970 was written")
	}
}
