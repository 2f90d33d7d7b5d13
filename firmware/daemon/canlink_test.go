package daemon

import (
	"testing"

	"fieldtap/board"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/slcan"
	"fieldtap/drivers/socketcan"
	"fieldtap/services/canbus"
	"fieldtap/services/rtp"
)

func TestLinkAdapters(t *testing.T) {
	tests := []struct {
		name     string
		got      canbus.Link
		mode     string
		state    string // "" = null
		counters bool
		reopens  int
	}{
		{name: "slcan open listen-only", got: slcanLink(slcan.Status{Open: true, ListenOnly: true, Bitrate: 250_000, Sessions: 3}), mode: "listen-only", reopens: 2},
		{name: "slcan closed", got: slcanLink(slcan.Status{}), mode: ""},
		{name: "socketcan bus-off", got: socketcanLink(socketcan.Status{LinkKind: "can", Open: true, Bitrate: 500_000, State: socketcan.StateBusOff, BusOffs: 1, Restarts: 1, Sessions: 1}), mode: "normal", state: "bus-off", counters: true},
		{name: "socketcan no state yet", got: socketcanLink(socketcan.Status{LinkKind: "can", ListenOnly: true}), mode: "listen-only", counters: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.got
			if l.Mode != tc.mode || l.Reopens != tc.reopens || (l.BusOffs != nil) != tc.counters || (l.Restarts != nil) != tc.counters {
				t.Errorf("link = %+v", l)
			}
			if (tc.state == "") != (l.BusState == nil) || (l.BusState != nil && *l.BusState != tc.state) {
				t.Errorf("bus state = %v, want %q", l.BusState, tc.state)
			}
			if l.BusState == nil && l.Note == "" {
				t.Error("a null field needs a note")
			}
		})
	}
}

func TestLinkCANSetsBitrateAndView(t *testing.T) {
	src, err := slcan.New(slcan.Options{Name: "can1", Device: "/dev/ttyACM9", Bitrate: 500_000})
	if err != nil {
		t.Fatal(err)
	}
	a := testAnalysers(t, rtp.Options{}, src)
	a.linkCAN([]capture.Source{src}, []board.Port{{Name: "can1", Driver: "slcan", Bitrate: 500_000}})
	// attach then finds the port linkCAN made.
	if _, _, err := a.attach("can1", capture.KindCAN); err != nil {
		t.Fatal(err)
	}
	st := a.can.Lookup("can1").Status()
	if st.Bitrate != 500_000 || st.Link == nil || st.Link.Driver != "slcan" {
		t.Errorf("status = bitrate %d link %+v", st.Bitrate, st.Link)
	}
}
