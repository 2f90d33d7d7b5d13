package daemon

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fieldtap/board"
	"fieldtap/firmware/config"
	"fieldtap/services/ports"
	"fieldtap/services/transmit"
)

// hardware is what bring-up left running: the ports to open, the arm
// switch, confirm button and status LED the transmit gatekeeper will use
// (nil when the board has none), the armed LED as last driven, and the
// gadget's address for the status page (empty without a gadget).
type hardware struct {
	ports   []board.Port
	arm     *board.ArmSwitch
	confirm *board.Button
	status  *board.LED
	led     *armedLED
	gadget  string
}

// armedLED remembers what the daemon last drove the armed LED to, for
// the status page; why says what drives it, or why nothing does.
type armedLED struct {
	on     atomic.Bool
	driven bool
	why    string
}

func (l *armedLED) state() (on, driven bool, why string) { return l.on.Load(), l.driven, l.why }

// startBoard brings up the board named in cfg, in order: its profile's
// ports merged with the configured [[port]] tables (ports whose driver is
// not in this build are listed in capture_status as skipped), the SPAN
// interface, the USB gadget, and the GPIO lines (status LED on, activity
// LED following frame counts, armed LED following the arm switch). Each
// part is logged up, skipped or failed and added to reg for
// capture_status, with the transmit-arm input; only a bad profile stops
// the box. The LED and arm watchers run in wg until ctx ends; the LEDs
// are off once wg is done.
func startBoard(ctx context.Context, wg *sync.WaitGroup, cfg config.Config, reg *ports.Registry, log *slog.Logger) (hardware, error) {
	if cfg.Board == "none" {
		reg.SetArm(noArm("board none: no arm input"))
		return hardware{ports: cfg.Ports, led: &armedLED{why: "board none has no LEDs"}}, nil
	}
	prof, err := board.Load(cfg.Board)
	if err != nil {
		return hardware{}, err
	}
	if !prof.Tested {
		log.Warn("board profile is written from public pinouts and untested on hardware", "board", prof.Name)
	}
	open, skip := board.SplitCompiled(board.MergePorts(prof.Ports, cfg.Ports), config.Drivers)
	for _, p := range skip {
		log.Warn("port skipped", "port", p.Name, "driver", p.Driver, "reason", "driver not in this build")
		reg.Add(skippedPort(p))
	}
	report := func(o board.Outcome) {
		logOutcome(ctx, log, o)
		reg.AddBoardPart(boardPart(o))
	}
	if cfg.Board == "sim" {
		for _, part := range []string{"span", "gadget"} {
			report(board.Outcome{Part: part, State: board.Skipped, Reason: "the simulated board replays generated traffic; nothing to prepare"})
		}
	} else {
		for _, o := range prepare(prof) {
			report(o)
		}
	}
	// The sim board's arm file, when configured, is its arm input, as in
	// startTransmit, which decides what the gatekeeper reads.
	fileArm := cfg.Board == "sim" && cfg.Transmit.ArmFile != ""
	if fileArm {
		reg.SetArm(armFile(cfg.Transmit.ArmFile))
	} else {
		reg.SetArm(noArm("profile " + prof.Name + " names no arm_input"))
	}

	hw := hardware{ports: open, led: &armedLED{why: "the profile names no armed LED"}}
	if cfg.Board != "sim" && prof.Gadget.Function != "" {
		if ip, _, err := net.ParseCIDR(prof.Gadget.Address); err == nil {
			hw.gadget = ip.String()
		}
	}
	var chips board.Chip = &board.SimChip{}
	if cfg.Board != "sim" {
		if chips, err = board.OpenChips(); err != nil {
			report(board.Outcome{Part: "gpio", State: board.Failed, Reason: err.Error()})
			reg.SetArm(noArm("GPIO failed: " + err.Error()))
			hw.led.why = "GPIO failed: " + err.Error()
			return hw, nil
		}
	}
	lines, err := board.OpenLines(prof.GPIO, chips)
	if err != nil {
		// Without its lines the box still captures; transmit stays disarmed.
		report(board.Outcome{Part: "gpio", State: board.Failed, Reason: err.Error()})
		if !fileArm {
			reg.SetArm(noArm("GPIO failed: " + err.Error()))
		}
		hw.led.why = "GPIO failed: " + err.Error()
		return hw, nil
	}
	report(board.Outcome{Part: "gpio", State: board.Up, Reason: gpioDetail(prof.GPIO)})
	_ = lines.Status.Set(true)
	wg.Go(func() { <-ctx.Done(); _ = lines.Status.Set(false) })
	wg.Go(func() { lines.Activity.Blink(ctx, func() uint64 { return totalFrames(reg) }) })
	switch {
	case prof.GPIO.ArmedLED == "":
	case lines.Arm == nil:
		hw.led.why = "the armed LED follows a GPIO arm input, and this profile names none"
		if fileArm {
			hw.led.why = "the armed LED follows a GPIO arm input; this board is armed by its arm file"
		}
	default:
		hw.led.driven, hw.led.why = true, ""
	}
	if lines.Arm != nil {
		if !fileArm {
			reg.SetArm(armLine(lines.Arm, prof.GPIO.ArmInput))
		}
		wg.Go(func() {
			lines.Arm.Watch(ctx, func(armed bool) {
				if lines.Armed.Set(armed) == nil {
					hw.led.on.Store(armed)
				}
				log.Info("transmit arm switch", "armed", armed, "changes", lines.Arm.Changes())
			})
			if lines.Armed.Set(false) == nil {
				hw.led.on.Store(false)
			}
		})
	}
	hw.arm, hw.confirm, hw.status = lines.Arm, lines.Confirm, lines.Status
	return hw, nil
}

// prepare readies the SPAN interface and the USB gadget. Both steps are
// idempotent: root runs them before dropping privileges, and the
// unprivileged daemon runs them again, finding the root-only parts done.
func prepare(prof board.Profile) []board.Outcome {
	return []board.Outcome{board.PrepareSpan(prof.Span.Interface), board.SetupGadget(prof.Gadget)}
}

// PrepareBoard runs the root-only bring-up (SPAN sysctl, gadget configfs)
// for the board in the checked configuration and logs each outcome; it reports whether none
// failed. fieldtapd calls it before a privilege drop and for
// --prepare-only (a systemd ExecStartPre=+).
//
// Its first step is the listen-only step Run also begins with: as root,
// before the unprivileged daemon even starts, a CAN port a killed run left
// able to transmit is listen-only again one process start sooner. Run
// repeats it (a no-op on a port already listen-only) and records it.
func PrepareBoard(ctx context.Context, checked config.Checked, log *slog.Logger) (bool, error) {
	cfg := checked.Config()
	listenOnlyFirst(ctx, cfg, log)
	if cfg.Board == "none" || cfg.Board == "sim" {
		return true, nil
	}
	prof, err := board.Load(cfg.Board)
	if err != nil {
		return false, err
	}
	ok := true
	for _, o := range prepare(prof) {
		logOutcome(ctx, log, o)
		ok = ok && o.State != board.Failed
	}
	return ok, nil
}

func logOutcome(ctx context.Context, log *slog.Logger, o board.Outcome) {
	lvl := slog.LevelInfo
	if o.State != board.Up {
		lvl = slog.LevelWarn
	}
	log.Log(ctx, lvl, "board "+string(o.State), "part", o.Part, "detail", o.Reason)
}

// boardPart is an outcome as capture_status shows it; board.State's
// values are the ports.Outcome… strings.
func boardPart(o board.Outcome) ports.BoardPart {
	return ports.BoardPart{Part: o.Part, Outcome: string(o.State), Detail: o.Reason}
}

// gpioDetail names the lines the profile opened, inputs with their sense.
func gpioDetail(g board.GPIO) string {
	var parts []string
	for _, l := range []struct {
		role, spec string
		high       bool
	}{
		{"status LED", g.StatusLED, false}, {"activity LED", g.ActivityLED, false}, {"armed LED", g.ArmedLED, false},
		{"arm input", g.ArmInput, g.ArmActiveHigh}, {"confirm input", g.ConfirmInput, g.ConfirmActiveHigh},
	} {
		if l.spec == "" {
			continue
		}
		part := l.role + " " + l.spec
		if l.high {
			part += " (active high)"
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return "the profile names no lines"
	}
	return strings.Join(parts, ", ")
}

// armLine reports a GPIO arm input; Armed reads the line at each call.
func armLine(a *board.ArmSwitch, line string) func() ports.Arm {
	return func() ports.Arm {
		return ports.Arm{On: a.Armed(), Input: ports.ArmInputGPIO, Where: line, Changes: a.Changes()}
	}
}

// armFile reports the sim board's arm file, read as the gatekeeper reads it.
func armFile(path string) func() ports.Arm {
	f := transmit.FileArm{Path: path}
	return func() ports.Arm { return ports.Arm{On: f.Armed(), Input: ports.ArmInputFile, Where: path} }
}

// noArm reports a board without an arm input: never armed, and why.
func noArm(why string) func() ports.Arm {
	a := ports.Arm{Input: ports.ArmInputNone, Where: why}
	return func() ports.Arm { return a }
}

func totalFrames(reg *ports.Registry) uint64 {
	var n uint64
	for _, s := range reg.Snapshot() {
		n += s.Frames
	}
	return n
}

// skippedPort reports a profile port whose driver this build lacks:
// ended from start-up.
func skippedPort(p board.Port) func() ports.Status {
	s := ports.Status{
		Name: p.Name, Kind: "unknown", Source: p.Driver + ":" + p.Device,
		SourceExhausted: true,
		StoppedEarly:    "skipped: driver " + p.Driver + " is not in this build",
		State:           ports.StateEnded,
		StateSince:      timePtr(time.Now()),
	}
	return func() ports.Status { return s }
}
