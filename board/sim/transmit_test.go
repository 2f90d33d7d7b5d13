package sim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
)

// can0 returns the board's CAN port at speed.
func can0(t *testing.T, speed float64) *Port {
	t.Helper()
	for _, src := range Ports(Options{Speed: speed, Seed: DefaultSeed}) {
		if p := src.(*Port); p.CanTransmit() {
			return p
		}
	}
	t.Fatal("no sim port has a transmit side")
	return nil
}

// TestTransmitSideRefuses: only can0 has a writer; it refuses while
// listen-only and while the port is not playing paced traffic.
func TestTransmitSideRefuses(t *testing.T) {
	for _, src := range Ports(Options{Speed: 1}) {
		if p := src.(*Port); p.CanTransmit() != (p.Name() == "can0") {
			t.Errorf("port %s: transmit side %v", p.Name(), p.CanTransmit())
		}
	}
	p := can0(t, 1)
	ctx := context.Background()
	if err := p.WriteFrame(ctx, wire.CANEFF|0x18EA00FA, []byte{0xEC, 0xFE, 0}); !errors.Is(err, ErrListenOnly) {
		t.Errorf("listen-only write: %v", err)
	}
	if p.Transmitting() {
		t.Error("can0 starts active, want listen-only")
	}
	p.SetTransmit(true)
	if !p.Transmitting() {
		t.Error("can0 not active after SetTransmit(true)")
	}
	if err := p.WriteFrame(ctx, wire.CANEFF|0x18EA00FA, []byte{0xEC, 0xFE, 0}); !errors.Is(err, ErrNotPlaying) {
		t.Errorf("write before Run: %v", err)
	}
	if err := p.WriteFrame(ctx, 0x7E0, make([]byte, 9)); err == nil {
		t.Error("a 9-byte frame was taken")
	}
}

// TestWriteIsOnTheBusAndAnswered runs can0 at real-time pace: a written
// Request is captured with the writer's time among the generated frames,
// and the engine's BAM answer reaches both the capture and the tap, which
// never sees the written frame itself. Run's stop leaves nothing running.
func TestWriteIsOnTheBusAndAnswered(t *testing.T) {
	p := can0(t, 1)
	var mu sync.Mutex
	var heard []uint32
	p.SetTap(func(_ time.Time, id uint32, _ []byte) {
		mu.Lock()
		heard = append(heard, id)
		mu.Unlock()
	})
	p.SetTransmit(true)
	var c capture.Counters
	h := capture.NewHandoff(1<<14, &c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, h); h.Close() }()

	var wrote time.Time
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		before := time.Now()
		err := p.WriteFrame(ctx, wire.CANEFF|0x18EA00FA, []byte{0xEC, 0xFE, 0x00})
		if err == nil {
			wrote = before
			break
		}
		if !errors.Is(err, ErrNotPlaying) || time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	var ours, cm, dt int
	var at time.Time
	for ours == 0 || dt < 3 {
		b, ok := h.Receive()
		if !ok {
			t.Fatal("the port ended before the answer")
		}
		for _, f := range b.Frames {
			id, _, err := wire.DecodeCAN(f.Data)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case id == wire.CANEFF|0x18EA00FA:
				ours++
				at = f.Time
			case ours > 0 && id == wire.CANEFF|0x1CECFF00:
				cm++
			case ours > 0 && cm > 0 && id == wire.CANEFF|0x1CEBFF00:
				dt++
			}
		}
		h.Release(b)
	}
	cancel()
	for {
		b, ok := h.Receive()
		if !ok {
			break
		}
		h.Release(b)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ours != 1 || cm < 1 {
		t.Errorf("captured %d requests, %d BAM announcements after it", ours, cm)
	}
	if at.Before(wrote.Add(-time.Second)) || at.After(time.Now()) {
		t.Errorf("request captured at %v, written at %v", at, wrote)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 4 || heard[0] != wire.CANEFF|0x1CECFF00 {
		t.Errorf("tap heard %X, want the BAM and its 3 packets (not our own request)", heard)
	}
	if err := p.WriteFrame(context.Background(), wire.CANEFF|0x18EA00FA, []byte{0xEC, 0xFE, 0}); !errors.Is(err, ErrNotPlaying) {
		t.Errorf("write after Run: %v", err)
	}
}
