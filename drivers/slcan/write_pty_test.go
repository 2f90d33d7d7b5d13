//go:build linux

package slcan

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/slcan/slcantest"
	"fieldtap/drivers/wire"
)

const testVIN = "1FUJGLDR5CLBP8834"

type tapped struct {
	id   uint32
	data []byte
}

// TestWriteOverPty drives the write side against the simulated adapter
// with an ECU on its bus: refused while listen-only, sent only after
// SetMode(Normal), the BAM answer seen through the tap, back to L after.
func TestWriteOverPty(t *testing.T) {
	tests := []struct {
		variant slcantest.Variant
		wantErr error // of the transmit in normal mode
	}{
		{variant: slcantest.CANable},
		{variant: slcantest.USBtin},
		{variant: slcantest.Silent},
		{variant: slcantest.BusOff, wantErr: ErrRefused},
	}
	for _, tc := range tests {
		t.Run(tc.variant.Name, func(t *testing.T) {
			src, ad, _, _, cancel, done := startPty(t, tc.variant, Options{Name: "can1", AckTimeout: ackWait(tc.variant)})
			defer func() { cancel(); <-done }()
			ad.AttachECU(slcantest.NewECU(testVIN))
			rx := make(chan tapped, 16)
			src.SetTap(func(_ time.Time, id uint32, data []byte) {
				rx <- tapped{id, append([]byte(nil), data...)}
			})
			waitOpen(t, src, ad)
			ctx := context.Background()
			req := []byte{0xEC, 0xFE, 0x00}
			if err := src.WriteFrame(ctx, wire.CANEFF|0x18EA00F9, req); !errors.Is(err, ErrListenOnly) {
				t.Fatalf("write while listen-only = %v, want ErrListenOnly", err)
			}
			if len(ad.Received()) != 0 {
				t.Fatalf("a listen-only write reached the adapter: %+v", ad.Received())
			}
			if err := src.SetMode(ctx, Normal); err != nil {
				t.Fatal(err)
			}
			if waitMode(ad, "normal") != "normal" || src.Status().ListenOnly {
				t.Fatalf("adapter %q, status %+v after SetMode(Normal)", ad.Mode(), src.Status())
			}
			err := src.WriteFrame(ctx, wire.CANEFF|0x18EA00F9, req)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("WriteFrame = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil {
				if got := bamPayload(t, rx); !strings.HasPrefix(got, testVIN+"*") {
					t.Errorf("BAM payload %q, want the VIN", got)
				}
				if st := src.Status(); st.Sent != 1 {
					t.Errorf("status sent %d, want 1", st.Sent)
				}
			} else if n := src.Stats().Errors[ReasonTxRefused]; n != 1 {
				t.Errorf("tx_refused = %d, want 1", n)
			}
			if err := src.SetMode(ctx, ListenOnly); err != nil {
				t.Fatal(err)
			}
			if waitMode(ad, "listen") != "listen" || !src.Status().ListenOnly {
				t.Fatalf("adapter %q after SetMode(ListenOnly)", ad.Mode())
			}
			cmds := strings.Join(ad.Commands(), " ")
			if want := "L C O T18EA00F93ECFE00 C L"; !strings.HasSuffix(cmds, want) {
				t.Errorf("commands %q, want them to end %q", cmds, want)
			}
			for _, r := range ad.Received() {
				if r.Mode != "normal" {
					t.Errorf("a transmit arrived in mode %q", r.Mode)
				}
			}
		})
	}
}

// TestSetModeWithoutSession: listen-only is a no-op with nothing open;
// normal and writes are refused.
func TestSetModeWithoutSession(t *testing.T) {
	src, err := New(Options{Device: "/dev/null-not-opened"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := src.SetMode(ctx, ListenOnly); err != nil {
		t.Errorf("SetMode(ListenOnly) = %v, want nil", err)
	}
	if err := src.SetMode(ctx, Normal); !errors.Is(err, ErrClosed) {
		t.Errorf("SetMode(Normal) = %v, want ErrClosed", err)
	}
	if err := src.WriteFrame(ctx, 0x123, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("WriteFrame = %v, want ErrClosed", err)
	}
}

func waitOpen(t *testing.T, src *Source, ad *slcantest.Adapter) {
	t.Helper()
	deadline := time.Now().Add(giveUp)
	for time.Now().Before(deadline) {
		if s, st := src.session(); s != nil && st.Open {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("never opened; commands %q", ad.Commands())
}

// bamPayload collects a TP.CM BAM and its TP.DT packets from SA 00.
func bamPayload(t *testing.T, rx <-chan tapped) string {
	t.Helper()
	var size, packets int
	var got []byte
	deadline := time.After(giveUp)
	for packets == 0 || len(got) < packets*7 {
		select {
		case f := <-rx:
			switch f.id &^ wire.CANEFF {
			case 0x1CECFF00:
				size, packets = int(f.data[1])|int(f.data[2])<<8, int(f.data[3])
			case 0x1CEBFF00:
				got = append(got, f.data[1:]...)
			}
		case <-deadline:
			t.Fatalf("BAM incomplete: %q", got)
		}
	}
	return string(got[:size])
}

// giveUp bounds the waits on the simulated adapter; not a speed assertion.
const giveUp = 10 * time.Second

// ackWait is the driver's ack timeout in these tests: long for adapters
// that answer, so a reply a loaded machine delivers late is still read as
// the reply to its own command; short for silent ones, whose every
// command waits it out.
func ackWait(v slcantest.Variant) time.Duration {
	if v.Ack == "" {
		return 100 * time.Millisecond
	}
	return 2 * time.Second
}

// waitMode returns the adapter's mode once it is want, or after giveUp:
// a silent adapter gives the driver no reply to wait on, so the driver
// can return before the adapter has read its last command.
func waitMode(ad *slcantest.Adapter, want string) string {
	for deadline := time.Now().Add(giveUp); ad.Mode() != want && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	return ad.Mode()
}

// TestLateReplyOverPty: the adapter answers a transmit only after the
// driver gave up on it (issue #33: an adapter that acknowledged a DM11
// about 300 ms late, which the box reported as refused). WriteFrame says
// the frame may have gone out; the reply that comes later is this
// frame's (nothing else is written meanwhile: a second transmit waits),
// is counted and told by LateReply; closing the channel does not wait.
func TestLateReplyOverPty(t *testing.T) {
	tests := []struct {
		variant slcantest.Variant
		acked   bool
		reason  string
	}{
		{variant: slcantest.CANable, acked: true, reason: ReasonTxLateAck},
		{variant: slcantest.BusOff, reason: ReasonTxLateRefused},
	}
	for _, tc := range tests {
		t.Run(tc.variant.Name, func(t *testing.T) {
			// The adapter answers the DM11 when the test says, and the
			// late-reply wait outlasts the test's own give-up, so no
			// timing decides what the driver sees.
			src, ad, _, _, cancel, done := startPty(t, tc.variant, Options{Name: "can1", AckTimeout: ackWait(tc.variant), LateReplyWait: maxLateReplyWait})
			defer func() { cancel(); <-done }()
			waitOpen(t, src, ad)
			ctx := context.Background()
			if err := src.SetMode(ctx, Normal); err != nil {
				t.Fatal(err)
			}
			release := ad.HoldNextTransmitReply()
			dm11 := []byte{0xD3, 0xFE, 0x00}
			err := src.WriteFrame(ctx, wire.CANEFF|0x18EAFFF9, dm11)
			var na *NoAckError
			if !errors.As(err, &na) || !errors.Is(err, ErrNoAck) || !na.MayHaveSent() {
				t.Fatalf("WriteFrame = %v, want a NoAckError saying the frame may have gone out", err)
			}
			if rx := ad.Received(); len(rx) != 1 {
				t.Fatalf("the adapter got %d transmits, want the DM11", len(rx))
			}
			// A second transmit must not be written before the first's
			// reply: its own ack would be taken for the first's.
			second := make(chan error, 1)
			go func() { second <- src.WriteFrame(ctx, 0x123, []byte{1}) }()
			release()
			acked, at := na.LateReply(ctx)
			if acked != tc.acked || at.IsZero() {
				t.Errorf("LateReply = %v at %v, want acked %v with its time", acked, at, tc.acked)
			}
			if n := src.Stats().Errors[tc.reason]; n != 1 {
				t.Errorf("%s = %d, want 1 (errors %v)", tc.reason, n, src.Stats().Errors)
			}
			select {
			case err := <-second:
				if tc.acked && err != nil || !tc.acked && !errors.Is(err, ErrRefused) {
					t.Errorf("second transmit = %v", err)
				}
			case <-time.After(giveUp):
				t.Fatal("the second transmit never finished")
			}
			if err := src.SetMode(ctx, ListenOnly); err != nil || waitMode(ad, "listen") != "listen" {
				t.Fatalf("SetMode(ListenOnly) = %v, adapter %q", err, ad.Mode())
			}
			cmds := strings.Join(ad.Commands(), " ")
			if want := "O T18EAFFF93D3FE00 t123101 C L"; !strings.HasSuffix(cmds, want) {
				t.Errorf("commands %q, want them to end %q", cmds, want)
			}
		})
	}
}
