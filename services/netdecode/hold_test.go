package netdecode

import (
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// A held decoder counts on the held lock: every counting path (a frame,
// a skip, a fragment) runs inside the batch without locking again, and
// Stats after Release sees the whole batch.
func TestHoldCountsTheBatch(t *testing.T) {
	s := &sink{}
	d := New(Options{}, s)
	whole := udpSeg("0123456789abcdefghijklmnopqrstuvwxyz")
	d.Hold()
	d.Decode(time.Unix(1, 0), wire.LinkRaw, ipv4(protoUDP, 1, 0, whole))
	d.Decode(time.Unix(1, 0), wire.LinkRaw, []byte{0x45, 0})                       // truncated
	d.Decode(time.Unix(1, 0), wire.LinkRaw, ipv4(protoUDP, 7, 0x2000, whole[:24])) // first fragment
	d.Release()
	st := d.Stats()
	if st.Frames != 3 || st.Skipped[SkipTruncated] != 1 || st.Frag.Fragments != 1 || st.Frag.Pending != 1 || len(s.udp) != 1 {
		t.Fatalf("after the batch: frames %d, truncated %d, fragments %d, pending %d, datagrams %d; want 3, 1, 1, 1, 1",
			st.Frames, st.Skipped[SkipTruncated], st.Frag.Fragments, st.Frag.Pending, len(s.udp))
	}
}
