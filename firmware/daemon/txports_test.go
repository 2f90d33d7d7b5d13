package daemon

import (
	"context"
	"testing"
	"time"

	"fieldtap/board/sim"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/j1708"
	"fieldtap/drivers/slcan"
	"fieldtap/drivers/socketcan"
	"fieldtap/drivers/wire"
	"fieldtap/services/rtp"
	"fieldtap/services/transmit"
)

func TestRxHub(t *testing.T) {
	var h rxHub
	h.deliver(time.Now(), 1, []byte{1}) // nobody listens: dropped silently, not counted
	ch, stop := h.Listen(context.Background())
	buf := []byte{0xEC, 0xFE, 0x00}
	h.deliver(time.Now(), wire.CANEFF|0x18EA00F9, buf)
	buf[0] = 0 // the driver reuses its buffer
	f := <-ch
	if f.ID != wire.CANEFF|0x18EA00F9 || f.Data[0] != 0xEC {
		t.Fatalf("got %+v, want a copy of the frame", f)
	}
	for range rxDepth + 3 {
		h.deliver(time.Now(), 2, nil)
	}
	if d := h.dropped.Load(); d != 3 {
		t.Errorf("dropped %d, want 3 (a full listener never blocks the reader)", d)
	}
	stop()
	stop() // idempotent
	n := 0
	for range ch {
		n++
	}
	if n != rxDepth {
		t.Errorf("drained %d, want %d then a closed channel", n, rxDepth)
	}
	h.deliver(time.Now(), 3, nil) // after stop: no panic on a closed channel
}

func TestTransmitSide(t *testing.T) {
	src, err := slcan.New(slcan.Options{Name: "can1", Device: "/dev/ttyACM9"})
	if err != nil {
		t.Fatal(err)
	}
	var p transmit.Port
	if !transmitSide(src, &p) || p.Writer == nil || p.Mode == nil || p.Listener == nil {
		t.Fatalf("slcan port = %+v, want writer, mode and listener", p)
	}
	if err := p.Mode.SetMode(context.Background(), transmit.ModeActive); err == nil {
		t.Error("an unopened adapter left listen-only")
	}
	if err := p.Mode.SetMode(context.Background(), transmit.ModeListenOnly); err != nil {
		t.Errorf("listen-only on a closed adapter = %v, want nil", err)
	}
}

func TestTransmitSideJ1708(t *testing.T) {
	src, err := j1708.New(j1708.Options{Name: "j1708", Device: "/dev/ttyS9"})
	if err != nil {
		t.Fatal(err)
	}
	var p transmit.Port
	if !transmitSide(src, &p) || p.Writer == nil || p.Mode == nil {
		t.Fatalf("j1708 port = %+v, want writer and mode", p)
	}
	if err := p.Mode.SetMode(context.Background(), transmit.ModeActive); err == nil {
		t.Error("an unopened port left listen-only")
	}
	if err := p.Mode.SetMode(context.Background(), transmit.ModeListenOnly); err != nil {
		t.Errorf("listen-only on a closed port = %v, want nil", err)
	}
	if err := p.Writer.WriteFrame(context.Background(), 0, []byte{0x80, 0x80}); err == nil {
		t.Error("an unopened port accepted a write")
	}
}

func TestTransmitSideSocketCAN(t *testing.T) {
	src, err := socketcan.New(socketcan.Options{Interface: "can9"})
	if err != nil {
		t.Fatal(err)
	}
	var p transmit.Port
	if !transmitSide(src, &p) || p.Writer == nil || p.Mode == nil || p.Listener == nil {
		t.Fatalf("socketcan port = %+v, want writer, mode and listener", p)
	}
	if err := p.Writer.WriteFrame(context.Background(), 0x7E0, []byte{1}); err == nil {
		t.Error("a listen-only port accepted a write")
	}
}

// TestTransmitSideSim: only the sim board's can0 gets a writer, mode and
// listener; the mode switch is tracked by the port.
func TestTransmitSideSim(t *testing.T) {
	for _, src := range sim.Ports(sim.Options{Speed: 1}) {
		var p transmit.Port
		ok := transmitSide(src, &p)
		if ok != (src.Name() == simCANPort) || ok != simWriter(src) {
			t.Errorf("port %s: transmit side %v", src.Name(), ok)
		}
		if !ok {
			continue
		}
		if p.Writer == nil || p.Mode == nil || p.Listener == nil {
			t.Fatalf("sim can0 = %+v, want writer, mode and listener", p)
		}
		port := src.(*sim.Port)
		if err := p.Mode.SetMode(context.Background(), transmit.ModeActive); err != nil || !port.Transmitting() {
			t.Errorf("active: %v, transmitting %v", err, port.Transmitting())
		}
		if err := p.Mode.SetMode(context.Background(), transmit.ModeListenOnly); err != nil || port.Transmitting() {
			t.Errorf("listen-only: %v, transmitting %v", err, port.Transmitting())
		}
		if err := p.Writer.WriteFrame(context.Background(), 0x7E0, []byte{2, 0x10, 0x03}); err == nil {
			t.Error("a listen-only sim port accepted a write")
		}
	}
}

// TestJ1708LoadIsMeasured: a J1708 port's frames feed its load meter, and
// the gatekeeper's bus load reads it (22 messages a second show load).
func TestJ1708LoadIsMeasured(t *testing.T) {
	an := testAnalysers(t, rtp.Options{}, testSource{name: "j1708", kind: capture.KindJ1708})
	consume, _, err := an.attach("j1708", capture.KindJ1708)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte{128, 190, 0x80, 0x0C, 0x66} // MID 128, engine speed, checksum
	now := time.Now()
	for i := range 44 {
		consume([]capture.Frame{{Time: now.Add(-2*time.Second + time.Duration(i)*time.Second/22), Link: wire.LinkJ1708, Data: msg}})
	}
	load, known := busLoad(an.can, an.j1708Load)("j1708")
	want := 22.0 * float64(len(msg)*transmit.J1708BitsPerByte) / transmit.J1708Bitrate
	if !known || load < 0.85*want || load > 1.15*want {
		t.Fatalf("J1708 load %v (known %v), want about %.3f", load, known, want)
	}
	if _, known := busLoad(an.can, an.j1708Load)("can0"); known {
		t.Error("an unknown port measures load")
	}
}
