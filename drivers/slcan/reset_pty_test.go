//go:build linux

package slcan

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/creack/pty"
	"go.bug.st/serial"

	"fieldtap/drivers/slcan/slcantest"
)

// TestResetListenOnly: an adapter a killed run left open in normal mode
// (O) is listen-only after ResetListenOnly, for each way adapters answer;
// one without listen-only is left closed, and the reset says so.
func TestResetListenOnly(t *testing.T) {
	for _, tc := range []struct {
		v       slcantest.Variant
		want    string
		refused bool
	}{
		{v: slcantest.CANable, want: "listen"},
		{v: slcantest.USBtin, want: "listen"},
		{v: slcantest.Silent, want: "listen"},
		{v: slcantest.NoL, want: "closed", refused: true},
	} {
		t.Run(tc.v.Name, func(t *testing.T) {
			master, slave, err := pty.Open()
			if err != nil {
				t.Skipf("no pty here: %v", err)
			}
			defer master.Close()
			defer slave.Close()
			ad := slcantest.New(master, tc.v)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go ad.Serve(ctx)
			// The killed run: the channel open in normal mode, streaming.
			// (Through serial.Open, which puts the tty in raw mode as the
			// driver does, or the pty would echo the adapter's replies.)
			killed, err := serial.Open(slave.Name(), &serial.Mode{BaudRate: DefaultBaud})
			if err != nil {
				t.Fatal(err)
			}
			killed.Write([]byte("C\rS5\rO\r"))
			if tc.v.Ack != "" {
				readAcks(t, killed, 3) // the killed run read the replies to its commands
			}
			for deadline := time.Now().Add(10 * time.Second); ad.Mode() != "normal"; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the adapter never opened normal: %q", ad.Commands())
				}
			}
			killed.Close()
			ad.Write([]byte("T0CF004008F07D7D0019F07D\r"))
			o := Options{Device: slave.Name(), Bitrate: 250_000, AckTimeout: ackWait(tc.v)}
			err = ResetListenOnly(context.Background(), o)
			if (err != nil) != tc.refused {
				t.Fatalf("reset: %v", err)
			}
			if waitMode(ad, tc.want) != tc.want || ad.Bitrate() != "S5" {
				t.Errorf("after the reset: mode %s bitrate %s, want %s S5", ad.Mode(), ad.Bitrate(), tc.want)
			}
			if got := ad.Commands(); !slices.Equal(got[len(got)-3:], []string{"C", "S5", "L"}) {
				t.Errorf("commands %q, want C, S5, L last", got)
			}
		})
	}
	if err := ResetListenOnly(context.Background(), Options{Device: "/dev/does-not-exist"}); err == nil {
		t.Error("a missing device reset")
	}
}

// readAcks reads from p until n replies (CR or BELL) came back, bounded.
func readAcks(t *testing.T, p serial.Port, n int) {
	t.Helper()
	p.SetReadTimeout(100 * time.Millisecond)
	buf := make([]byte, 64)
	for deadline := time.Now().Add(10 * time.Second); n > 0; {
		k, _ := p.Read(buf)
		n -= bytes.Count(buf[:k], []byte{'\r'}) + bytes.Count(buf[:k], []byte{'\a'}) // an ack or a BELL each
		if time.Now().After(deadline) {
			t.Fatalf("%d acks never came", n)
		}
	}
}
