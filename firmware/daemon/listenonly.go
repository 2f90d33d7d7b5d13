package daemon

import (
	"context"
	"log/slog"
	"time"

	"fieldtap/board"
	"fieldtap/drivers/slcan"
	"fieldtap/drivers/socketcan"
	"fieldtap/firmware/config"
	"fieldtap/services/transmit"
)

// listenOnlyGiveUp bounds the whole start-up listen-only step: an slcan
// adapter's three commands wait at most their ack timeout each, and a
// netlink round trip takes milliseconds.
const listenOnlyGiveUp = 10 * time.Second

// listenOnlyFirst is the first thing Run does. A run killed mid-plan
// (kill -9, a crash, the watchdog) leaves a controller in normal mode or an
// slcan adapter open with O: ACKing every frame and able to transmit until
// something sets it back. So every CAN port the board and the
// configuration name, enabled for transmit or not, is put back in
// listen-only before the daemon does anything else: socketcan controllers
// over netlink (link down, listen-only, up, read back), slcan adapters with
// C, S, L. A port that cannot be reached is reported and the box starts
// anyway; the capture session opens it listen-only later, as always. The
// results go into the transmit audit's "started" record.
func listenOnlyFirst(ctx context.Context, cfg config.Config, log *slog.Logger) []transmit.PortReset {
	ctx, cancel := context.WithTimeout(ctx, listenOnlyGiveUp)
	defer cancel()
	ps := cfg.Ports
	if cfg.Board != "none" {
		// A bad profile stops start-up later, in startBoard, with its error.
		if prof, err := board.Load(cfg.Board); err == nil {
			ps = board.MergePorts(prof.Ports, cfg.Ports)
		}
	}
	ps, _ = board.SplitCompiled(ps, config.Drivers)
	resets := []transmit.PortReset{}
	for _, p := range ps {
		var err error
		switch p.Driver {
		case "socketcan":
			var src *socketcan.Source
			if src, err = socketcan.New(socketcan.Options{Name: p.Name, Interface: p.Device, Bitrate: p.Bitrate}); err == nil {
				err = src.SetMode(ctx, socketcan.ModeListenOnly)
			}
		case "slcan":
			err = slcan.ResetListenOnly(ctx, slcan.Options{Name: p.Name, Device: p.Device, Bitrate: p.Bitrate})
		default:
			continue // J1708 has no controller mode: its driver refuses writes outside a plan
		}
		r := transmit.PortReset{Port: p.Name, Driver: p.Driver, Mode: transmit.ModeListenOnly}
		if err != nil {
			r.Mode, r.Error = "", err.Error()
			log.Warn("CAN port not put back in listen-only at start-up", "port", p.Name, "driver", p.Driver, "err", err)
		} else {
			log.Info("CAN port put back in listen-only at start-up", "port", p.Name, "driver", p.Driver)
		}
		resets = append(resets, r)
	}
	return resets
}
