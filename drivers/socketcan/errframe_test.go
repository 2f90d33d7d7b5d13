package socketcan

import (
	"slices"
	"testing"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
	"fieldtap/drivers/wire"
)

func TestClassifyError(t *testing.T) {
	tests := []struct {
		name    string
		id      uint32
		data    []byte
		reasons []string
		state   BusState
		busOff  bool
		restart bool
		tx, rx  int
	}{
		{name: "bus off", id: wire.CANERR | errBusOff, data: make([]byte, 8),
			reasons: []string{"err_bus_off"}, state: StateBusOff, busOff: true, tx: -1, rx: -1},
		{name: "restarted", id: wire.CANERR | errRestarted, data: make([]byte, 8),
			reasons: []string{"err_restarted"}, state: StateErrorActive, restart: true, tx: -1, rx: -1},
		{name: "no ack", id: wire.CANERR | errAck, data: make([]byte, 8),
			reasons: []string{"err_no_ack"}, tx: -1, rx: -1},
		{name: "controller passive with counters", id: wire.CANERR | errCtrl | errCnt, data: []byte{0, 0x10 | 0x20, 0, 0, 0, 0, 136, 130},
			reasons: []string{"err_controller", "err_controller_rx_passive", "err_controller_tx_passive"}, state: StateErrorPassive, tx: 136, rx: 130},
		{name: "controller warning", id: errCtrl, data: []byte{0, 0x04, 0, 0, 0, 0, 0, 0}, // flag bit optional
			reasons: []string{"err_controller", "err_controller_rx_warning"}, state: StateErrorWarning, tx: -1, rx: -1},
		{name: "controller overflow and back to active", id: wire.CANERR | errCtrl, data: []byte{0, 0x01 | 0x40, 0, 0, 0, 0, 0, 0},
			reasons: []string{"err_controller", "err_controller_rx_overflow", "err_controller_active"}, state: StateErrorActive, tx: -1, rx: -1},
		{name: "protocol stuff on a bus error", id: wire.CANERR | errProt | errBusError, data: []byte{0, 0, 0x04, 0x0A, 0, 0, 0, 0},
			reasons: []string{"err_protocol", "err_bus_error", "err_protocol_stuff"}, tx: -1, rx: -1},
		{name: "lost arbitration, tx timeout, transceiver", id: wire.CANERR | errLostArb | errTxTimeout | errTrx, data: make([]byte, 8),
			reasons: []string{"err_tx_timeout", "err_lost_arbitration", "err_transceiver"}, tx: -1, rx: -1},
		{name: "restart then off again", id: wire.CANERR | errRestarted | errBusOff, data: make([]byte, 8),
			reasons: []string{"err_bus_off", "err_restarted"}, state: StateBusOff, busOff: true, restart: true, tx: -1, rx: -1},
		{name: "unknown class", id: wire.CANERR | 0x400, data: make([]byte, 8),
			reasons: []string{"err_unclassified"}, tx: -1, rx: -1},
		{name: "short", id: wire.CANERR | errBusOff, data: []byte{1, 2},
			reasons: []string{ReasonMalformedError}, tx: -1, rx: -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := classifyError(nil, tc.id, tc.data)
			if !slices.Equal(e.Reasons, tc.reasons) {
				t.Errorf("reasons = %q, want %q", e.Reasons, tc.reasons)
			}
			if e.State != tc.state || e.BusOff != tc.busOff || e.Restart != tc.restart || e.TxErr != tc.tx || e.RxErr != tc.rx {
				t.Errorf("got %+v", e)
			}
		})
	}
}

func TestClassifyErrorReusesSlice(t *testing.T) {
	buf := make([]string, 0, 16)
	id, data := uint32(wire.CANERR|errCtrl|errProt|errBusError), []byte{0, 0x3F, 0xFF, 0, 0, 0, 0, 0}
	if n := testing.AllocsPerRun(100, func() { buf = classifyError(buf, id, data).Reasons }); n != 0 {
		t.Errorf("%v allocs, want 0", n)
	}
}

// TestReaderCountsAndForwardsErrorFrames feeds raw can_frames as the socket
// delivers them and checks counters, bus state and the hand-off.
func TestReaderCountsAndForwardsErrorFrames(t *testing.T) {
	src, err := New(Options{Interface: "can0"})
	if err != nil {
		t.Fatal(err)
	}
	var c capture.Counters
	out := capture.NewHandoff(16, &c)
	r := reader{s: src, out: out}
	reads := [][]byte{
		raw(wire.CANEFF|0x18FECA00, []byte{0, 0xFF, 0x64, 0, 3, 1, 0xFF, 0xFF}),
		raw(wire.CANERR|errCtrl|errCnt, []byte{0, 0x08, 0, 0, 0, 0, 97, 0}),
		raw(wire.CANERR|errBusOff, make([]byte, 8)),
		raw(wire.CANERR|errRestarted, make([]byte, 8)),
		raw(0x123, []byte{1}),
		raw(0x123, []byte{1})[:10], // not a can_frame
		rawFD(wire.CANEFF|0x18FECA00, wire.CANFDBRS, make([]byte, 64)),
	}
	bad := raw(0x123, nil)
	bad[4] = 9
	fdBad := rawFD(0x123, 0, nil)
	fdBad[4] = 65
	reads = append(reads, bad, fdBad)
	for _, b := range reads {
		r.frame(b, testTime)
	}
	st := src.Status()
	if st.BusOffs != 1 || st.Restarts != 1 || st.ErrorFrames != 3 || st.State != StateErrorActive || st.TxErr != 97 || st.RxErr != 0 {
		t.Errorf("status = %+v", st)
	}
	errs := src.Stats().Errors
	for reason, n := range map[string]uint64{"err_bus_off": 1, "err_restarted": 1, "err_controller": 1, "err_controller_tx_warning": 1, ReasonShortRead: 1, ReasonLength: 1, ReasonFDLength: 1} {
		if errs[reason] != n {
			t.Errorf("errors[%s] = %d, want %d (all: %v)", reason, errs[reason], n, errs)
		}
	}
	if s := c.Snapshot(); s.Frames != 6 {
		t.Errorf("handed on %d frames, want 6 (2 data + 3 error + 1 FD)", s.Frames)
	}
	out.Close()
	var got []capture.Frame
	for f := range capturetest.Frames(out) {
		got = append(got, f)
	}
	f := got[0]
	if id, data, err := wire.DecodeCAN(f.Data); err != nil || id != wire.CANEFF|0x18FECA00 || len(data) != 8 || f.Link != wire.LinkCANSocketCAN {
		t.Errorf("first frame = %#x % x %v", id, data, err)
	}
	fd := got[len(got)-1]
	if id, flags, data, err := wire.DecodeCANFD(fd.Data); err != nil || id != wire.CANEFF|0x18FECA00 || flags != wire.CANFDFDF|wire.CANFDBRS || len(data) != 64 || len(fd.Data) != wire.CANFDFrameBytes {
		t.Errorf("FD frame = %#x %#x %d bytes %v", id, flags, len(data), err)
	}
}
