//go:build linux

package socketcan

import (
	"context"
	"testing"

	"fieldtap/drivers/capture"
)

// TestRunFailsAnInterfaceThatIsNotCAN runs the Linux path against the
// loopback interface (no AF_CAN needed): configure must refuse it, and
// the session must end with that error, counted, for the supervisor to
// retry; a second Run is a second session.
func TestRunFailsAnInterfaceThatIsNotCAN(t *testing.T) {
	src, err := New(Options{Interface: "lo"})
	if err != nil {
		t.Fatal(err)
	}
	var c capture.Counters
	for range 2 {
		if err := src.Run(context.Background(), capture.NewHandoff(4, &c)); err == nil {
			t.Fatal("Run on lo succeeded")
		}
	}
	st := src.Status()
	if st.Sessions != 2 || st.Open || st.LastError == "" || src.Stats().Errors[ReasonConfigure] != 2 {
		t.Errorf("status %+v errors %v: want two counted configure failures", st, src.Stats().Errors)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := src.Run(ctx, capture.NewHandoff(4, &c)); err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
}
