//go:build linux

package socketcan

import (
	"context"
	"testing"
	"time"

	"fieldtap/drivers/capture"
)

// TestRunRetriesAnInterfaceThatIsNotCAN runs the Linux path against the
// loopback interface (no AF_CAN needed): configure must refuse it, count
// the failure, retry, and stop cleanly on cancel.
func TestRunRetriesAnInterfaceThatIsNotCAN(t *testing.T) {
	src, err := New(Options{Interface: "lo"})
	if err != nil {
		t.Fatal(err)
	}
	var c capture.Counters
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, capture.NewHandoff(4, &c)) }()
	deadline := time.Now().Add(5 * time.Second)
	for src.Status().Sessions < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	st := src.Status()
	if st.Sessions < 2 || st.Open || st.LastError == "" || src.Stats().Errors[ReasonConfigure] < 1 {
		t.Errorf("status %+v errors %v: want a counted, retried configure failure", st, src.Stats().Errors)
	}
}
