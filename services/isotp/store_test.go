package isotp

import (
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// The store numbers frames as the port's frame ring does, error and
// remote frames included, so a transaction's seq finds its frames there.
func TestStoreSeqIsTheRingSeq(t *testing.T) {
	s, err := New(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := canbus.New(ring.Limits{})
	port, _ := cs.Port("can0", 0)
	frames := []struct {
		id   uint32
		data []byte
	}{
		{0x0CF00400 | wire.CANEFF, []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{0x7E0 | wire.CANRTR, nil},
		{0x20000004 | wire.CANERR, make([]byte, 8)},
		{0x7E0, []byte{0x02, 0x3E, 0x00}},
		{0x7E8, []byte{0x02, 0x7E, 0x00}},
	}
	for i, f := range frames {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		port.Add(at, f.id, f.data)
		if err := s.Feed("can0", at, f.id, f.data); err != nil {
			t.Fatal(err)
		}
	}
	snap := s.Transactions()
	if snap.Len() != 1 {
		t.Fatalf("%d transactions, want 1", snap.Len())
	}
	tx, _ := snap.Get(snap.FirstSeq())
	r, ok := port.Frames().Get(tx.Request.Seq)
	if !ok || r.ID != 0x7E0 || tx.ID != 3 || tx.Port != "can0" || tx.Status != StatusPositive {
		t.Errorf("transaction %+v points at frame %+v", tx, r)
	}
	st := s.Status()
	if len(st.Ports) != 1 || st.Ports[0].Frames != uint64(len(frames)) || st.Ports[0].Transport.Frames != 2 || st.Kept.Items != 1 {
		t.Errorf("status %+v", st)
	}
}

func TestStoreBounds(t *testing.T) {
	if _, err := New(Limits{Channels: MaxChannels + 1}); err == nil {
		t.Error("accepted too many channels")
	}
	s, _ := New(Limits{Ports: 1, Transactions: 2})
	if err := s.Feed("a", t0, 0x7E0, []byte{2, 0x3E, 0}); err != nil {
		t.Fatal(err)
	}
	if err := s.Feed("b", t0, 0x7E0, []byte{2, 0x3E, 0}); err == nil {
		t.Error("a second port was accepted at Ports 1")
	}
	for i := range 5 {
		at := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		s.Feed("a", at, 0x7E0, []byte{2, 0x3E, 0})
		s.Feed("a", at.Add(time.Millisecond), 0x7E8, []byte{2, 0x7E, 0})
	}
	if st := s.Status(); st.PortOverflow != 1 || st.Kept.Items != 2 || st.Kept.Evicted != 4 { // the first request, then ended by the next, makes 6
		t.Errorf("status %+v", st)
	}
}

func TestFeedAllCountsEachFrameOfARefusedPort(t *testing.T) {
	s, _ := New(Limits{Ports: 1})
	recs := []canbus.Record{{Time: t0, ID: 0x7E0, Len: 3, Data: [8]byte{2, 0x3E, 0}}, {Time: t0, ID: 0x7E8, Len: 3, Data: [8]byte{2, 0x7E, 0}}}
	if err := s.FeedAll("a", recs); err != nil {
		t.Fatal(err)
	}
	if err := s.FeedAll("b", recs); err == nil {
		t.Error("a second port was accepted at Ports 1")
	}
	if err := s.FeedAll("b", nil); err != nil {
		t.Errorf("no frames: %v", err)
	}
	if st := s.Status(); st.PortOverflow != 2 || st.Ports[0].Frames != 2 {
		t.Errorf("status %+v, want 2 frames of port a and 2 refused", st)
	}
}
