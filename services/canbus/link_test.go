package canbus

import (
	"testing"

	"fieldtap/services/ring"
)

func TestPortLinkView(t *testing.T) {
	s, err := New(ring.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Port("can0", 500_000)
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Status(); st.Link != nil || st.LinkReason == "" || st.Bitrate != 500_000 {
		t.Fatalf("no provider: link %v reason %q bitrate %d", st.Link, st.LinkReason, st.Bitrate)
	}
	offs := uint64(2)
	p.SetLink(func() Link {
		return Link{Driver: "socketcan", Open: true, Bitrate: 500_000, Mode: "listen-only", BusOffs: &offs}
	})
	st := p.Status()
	if st.Link == nil || st.LinkReason != "" || st.Link.Mode != "listen-only" || *st.Link.BusOffs != 2 {
		t.Errorf("link = %+v reason %q", st.Link, st.LinkReason)
	}
}
