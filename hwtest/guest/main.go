// Command guest runs inside the emulated board (hwtest) and does what
// busybox cannot: set a CAN controller's bitrate over netlink and put
// J1939 frames on a CAN interface.
//
//	guest canup IF BITRATE   set bitrate, bring the link up
//	guest cansend IF N       send N J1939 frames, 10 ms apart
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"go.einride.tech/can"
	"go.einride.tech/can/pkg/candevice"
	"go.einride.tech/can/pkg/socketcan"
)

// frameGap spaces frames so a listen-only receiver never overruns.
const frameGap = 10 * time.Millisecond

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "guest:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("usage: guest canup IF BITRATE | cansend IF N")
	}
	n, err := strconv.Atoi(args[2])
	if err != nil {
		return err
	}
	switch args[0] {
	case "canup":
		d, err := candevice.New(args[1])
		if err != nil {
			return err
		}
		if err := d.SetBitrate(uint32(n)); err != nil {
			return fmt.Errorf("%s bitrate: %w", args[1], err)
		}
		return d.SetUp()
	case "cansend":
		return send(args[1], n)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// send puts EEC1 (PGN 61444, engine speed) from source address 0 on the
// bus: a J1939 frame every analyser recognises.
func send(ifname string, n int) error {
	ctx := context.Background()
	conn, err := socketcan.DialContext(ctx, "can", ifname)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx := socketcan.NewTransmitter(conn)
	const eec1 = 0x0CF00400 // priority 3, PGN 0xF004, SA 0x00
	for i := 0; i < n; i++ {
		rpm := uint16(800+i) * 8 // 0.125 rpm/bit
		f := can.Frame{ID: eec1, IsExtended: true, Length: 8,
			Data: can.Data{0xF0, 0x7D, 0x7D, byte(rpm), byte(rpm >> 8), 0x00, 0xF0, 0x7D}}
		if err := tx.TransmitFrame(ctx, f); err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		time.Sleep(frameGap)
	}
	return nil
}
