package main

import (
	"context"
	"log/slog"
	"os"

	"fieldtap/firmware"
	"fieldtap/firmware/config"
	"fieldtap/firmware/daemon"
)

// dropOrPrepare handles --prepare-only and --user before the daemon
// starts. With --user, root brings up the root-only parts of the board,
// then re-runs fieldtapd as that user with CAP_NET_RAW and CAP_NET_ADMIN
// and waits for it; done reports that the caller should return code.
func dropOrPrepare(ctx context.Context, cfg config.Checked, log *slog.Logger, user string, prepareOnly bool, args []string) (code int, done bool) {
	if prepareOnly {
		ok, err := daemon.PrepareBoard(ctx, cfg, log)
		if err != nil || !ok {
			log.Error("board preparation failed", "err", err)
			return 1, true
		}
		return 0, true
	}
	if user == "" || os.Getenv(firmware.DroppedEnv) != "" {
		return 0, false
	}
	if _, err := daemon.PrepareBoard(ctx, cfg, log); err != nil {
		log.Error("board preparation failed", "err", err)
		return 1, true
	}
	log.Info("dropping privileges", "user", user, "keep", "CAP_NET_RAW CAP_NET_ADMIN")
	code, err := firmware.RunAs(ctx, user, args)
	if err != nil {
		log.Error("privilege drop failed", "err", err)
		return 1, true
	}
	return code, true
}
