//go:build linux

package slcan

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
	"fieldtap/drivers/slcan/slcantest"
	"fieldtap/drivers/wire"
)

// wireFrame is one frame the simulator sends and the driver must deliver.
type wireFrame struct {
	id       uint32 // with CANEFF/CANRTR flags
	data     []byte
	ts       int // -1: no timestamp
	wireData []byte
}

func (w wireFrame) line() string {
	d := w.data
	if w.id&wire.CANRTR != 0 {
		d = w.wireData // a remote frame's DLC without data
	}
	return slcantest.FrameLine(w.id&wire.CANEFFMask, w.id&wire.CANEFF != 0, w.id&wire.CANRTR != 0, d, w.ts)
}

// ptyScenario is traffic from a J1939 bus as an adapter prints it, with
// the garbage and replies a real line carries between frames, and the
// error counts the driver must report for it.
func ptyScenario() (lines []string, frames []wireFrame, errs map[string]uint64) {
	frames = []wireFrame{
		{id: wire.CANEFF | 0x0CF00400, data: []byte{0xF0, 0x7D, 0x7D, 0x00, 0x00, 0x00, 0xF0, 0x7D}, ts: -1},
		{id: wire.CANEFF | 0x18FEF100, data: []byte{0xFF, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, ts: 59990},
		{id: wire.CANEFF | 0x18FECA00, data: []byte{0x00, 0xFF, 0x64, 0x00, 0x03, 0x01, 0xFF, 0xFF}, ts: 5}, // wrapped, in order
		{id: 0x123, data: []byte{0xDE, 0xAD}, ts: -1},
		{id: 0x7FF, data: []byte{}, ts: 1200},
		{id: wire.CANRTR | 0x321, data: []byte{}, wireData: []byte{0, 0, 0, 0}, ts: -1},
		{id: wire.CANEFF | wire.CANRTR | 0x18EAFF00, data: []byte{}, wireData: []byte{0, 0, 0}, ts: 1100}, // backwards: reordered
		{id: wire.CANEFF | 0x18EEFF00, data: []byte{1, 2, 3, 4, 5, 6, 7, 8}, ts: 1300},
	}
	garbage := []string{
		"t12\r",                        // short_line
		"t1G30\r",                      // bad_hex
		"t1239000000000000000000\r",    // dlc_over_8
		"t1234DEAD\r",                  // length
		"t8000\r",                      // id_range
		"t1231ABEA60\r",                // timestamp
		"F00\r",                        // unknown_line: a status reply
		"\a",                           // bell
		strings.Repeat("A", 40) + "\r", // overlong_line
		"\x00\xff\x13\r",               // unknown_line: line noise
		"z\r", "Z", "\r",               // stray acks: tolerated, not counted
	}
	errs = map[string]uint64{
		ReasonShort: 1, ReasonBadHex: 1, ReasonDLC: 1, ReasonLength: 1, ReasonIDRange: 1,
		ReasonTimestamp: 1, ReasonUnknown: 2, ReasonBell: 1, ReasonOverlong: 1, ReasonReorder: 1,
	}
	for i, f := range frames {
		lines = append(lines, f.line())
		if i < len(garbage) {
			lines = append(lines, garbage[i])
		}
	}
	lines = append(lines, garbage[min(len(frames), len(garbage)):]...)
	return lines, frames, errs
}

// startPty runs a Source against a simulated adapter on a pty pair.
func startPty(t *testing.T, v slcantest.Variant, o Options) (*Source, *slcantest.Adapter, *capture.Handoff, *capture.Counters, context.CancelFunc, <-chan error) {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	ad := slcantest.New(master, v)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go ad.Serve(ctx)
	o.Device = slave.Name()
	src, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	var c capture.Counters
	out := capture.NewHandoff(256, &c)
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, out) }()
	return src, ad, out, &c, cancel, done
}

// TestAdapterOverPty runs the real driver on a pty whose other end a
// simulated adapter drives, once per acknowledgement variant.
func TestAdapterOverPty(t *testing.T) {
	tests := []struct {
		variant slcantest.Variant
		bitrate int
		wantS   string
		replies map[string]string
	}{
		{variant: slcantest.CANable, bitrate: 250_000, wantS: "S5", replies: map[string]string{"C": replyAck, "S5": replyAck, "L": replyAck}},
		{variant: slcantest.USBtin, bitrate: 500_000, wantS: "S6", replies: map[string]string{"C": replyBell, "S6": replyAck, "L": replyAck}},
		{variant: slcantest.Silent, bitrate: 1_000_000, wantS: "S8", replies: map[string]string{"C": replyNone, "S8": replyNone, "L": replyNone}},
	}
	for _, tc := range tests {
		t.Run(tc.variant.Name, func(t *testing.T) {
			src, ad, out, c, cancel, done := startPty(t, tc.variant, Options{Name: "can1", Bitrate: tc.bitrate, AckTimeout: ackWait(tc.variant)})
			select {
			case <-ad.Opened():
			case <-time.After(giveUp):
				t.Fatalf("adapter never opened; commands %q", ad.Commands())
			}
			lines, frames, wantErrs := ptyScenario()
			for _, w := range lines {
				if err := ad.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond) // reads split the stream anywhere; this varies where
			}
			var got []capture.Frame
			received := capturetest.Frames(out)
			deadline := time.After(giveUp)
		collect:
			for len(got) < len(frames) {
				select {
				case f := <-received:
					got = append(got, f)
				case <-deadline:
					break collect
				}
			}
			waitErrors(t, src, wantErrs)
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Run = %v", err)
			}

			if len(got) != len(frames) {
				t.Fatalf("got %d frames, want %d; errors %v; status %+v", len(got), len(frames), src.Stats().Errors, src.Status())
			}
			for i, f := range got {
				id, data, err := wire.DecodeCAN(f.Data)
				if err != nil || id != frames[i].id || !bytes.Equal(data, frames[i].data) || f.Link != wire.LinkCANSocketCAN {
					t.Errorf("frame %d = %#x % x (%v), want %#x % x", i, id, data, err, frames[i].id, frames[i].data)
				}
				if time.Since(f.Time) > time.Minute || f.Time.IsZero() {
					t.Errorf("frame %d time %v is not the host receive time", i, f.Time)
				}
			}
			if st := src.Stats(); !maps.Equal(st.Errors, wantErrs) {
				t.Errorf("errors = %v\nwant     %v", st.Errors, wantErrs)
			}
			if s := c.Snapshot(); s.Frames != uint64(len(frames)) {
				t.Errorf("hand-off counted %d frames", s.Frames)
			}
			cmds := ad.Commands()
			if want := []string{"C", tc.wantS, "L"}; len(cmds) < 3 || strings.Join(cmds[:3], " ") != strings.Join(want, " ") {
				t.Errorf("commands = %q, want %q first", cmds, want)
			}
			for _, c := range cmds {
				if c == "O" {
					t.Error("driver sent O: the port must open listen-only")
				}
			}
			st := src.Status()
			if !maps.Equal(st.Replies, tc.replies) || !st.ListenOnly || st.Bitrate != tc.bitrate {
				t.Errorf("status = %+v, want replies %v, listen-only", st, tc.replies)
			}
		})
	}
}

// TestRefusedListenOnlyNeverOpens: an adapter without L must stay closed;
// the driver must not fall back to O.
func TestRefusedListenOnlyNeverOpens(t *testing.T) {
	src, ad, _, _, cancel, done := startPty(t, slcantest.NoL, Options{Name: "can1", AckTimeout: ackWait(slcantest.NoL)})
	deadline := time.Now().Add(giveUp)
	for src.Stats().Errors[ReasonNotListen] == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	st := src.Status()
	if st.Open || st.Replies["L"] != replyBell || src.Stats().Errors[ReasonNotListen] == 0 {
		t.Errorf("status %+v errors %v: want a refused, closed port", st, src.Stats().Errors)
	}
	if ad.Mode() != "closed" {
		t.Errorf("adapter mode %q, want closed", ad.Mode())
	}
	for _, c := range ad.Commands() {
		if c == "O" {
			t.Error("driver fell back to O")
		}
	}
}

// waitErrors waits until the driver has counted want (the last lines may
// still be in flight when the last frame arrives).
func waitErrors(t *testing.T, src *Source, want map[string]uint64) {
	t.Helper()
	deadline := time.Now().Add(giveUp)
	for time.Now().Before(deadline) {
		got := src.Stats().Errors
		if maps.Equal(got, want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
