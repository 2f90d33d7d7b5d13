package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.einride.tech/can"
	"go.einride.tech/can/pkg/socketcan"

	"fieldtap/hwtest"
)

const (
	// ecuPeriod is how often the simulated ECU sends, as a body
	// controller broadcasts its switch states.
	ecuPeriod = 20 * time.Millisecond
	// ecuGiveUp ends a simulated ECU the host forgot to stop, so it never
	// outlives the check that started it by long.
	ecuGiveUp = 2 * time.Minute
)

// ecu plays an ECU whose one bit follows a control a person works: every
// ecuPeriod it sends hwtest.ECUID with a 4-bit rolling counter in byte 0
// (an alive counter, as ECUs send: a whole byte's top bit would flip
// every 2.56 s, near the presses' spacing, and could seem to follow
// them) and the control's state in byte 1 bit 0 (DBC bit hwtest.ECUBit), the rest
// constant. The guest cannot see the confirm button (fieldtapd holds the
// GPIO line), so the host works the control: each SIGUSR1 (the console's
// "ecu press") toggles the bit just before the host pulses the button.
// Once a frame carrying the new state is on the bus it prints an ECULine,
// which the host waits for. SIGTERM ends it with the frames it sent.
func ecu(ifname string) error {
	ctx := context.Background()
	conn, err := socketcan.DialContext(ctx, "can", ifname)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx := socketcan.NewTransmitter(conn)
	toggle := make(chan os.Signal, 8)
	signal.Notify(toggle, syscall.SIGUSR1)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	tick := time.NewTicker(ecuPeriod)
	defer tick.Stop()
	giveUp := time.After(ecuGiveUp)
	var state byte
	presses, frames, announced := 0, 0, 0
	fmt.Printf("%s started %s id=%08X\n", hwtest.ECULine, ifname, hwtest.ECUID)
	for {
		select {
		case <-toggle:
			state ^= 1
			presses++
			continue
		case <-stop:
			fmt.Printf("%s stopped frames=%d presses=%d\n", hwtest.ECULine, frames, presses)
			return nil
		case <-giveUp:
			return fmt.Errorf("ecu: not stopped within %v (%d frames)", ecuGiveUp, frames)
		case <-tick.C:
		}
		f := can.Frame{ID: hwtest.ECUID, IsExtended: true, Length: 8,
			Data: can.Data{byte(frames) & 0x0F, state, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}
		if err := tx.TransmitFrame(ctx, f); err != nil {
			return fmt.Errorf("ecu frame %d: %w", frames, err)
		}
		frames++
		if announced < presses {
			announced = presses
			fmt.Printf("%s press=%d bit=%d frame=%d\n", hwtest.ECULine, presses, state, frames)
		}
	}
}
