// Command fieldtap is the operator's tool beside the fieldtap box:
//
//	fieldtap gen sip|j1939|j1708 -o FILE [-seed N] [-duration 60s] [-start RFC3339]
//	                    [-workshop] [-claim-conflict]
//	fieldtap plan show|run FILE [--port P] [--config FILE]
//	fieldtap button press [--file PATH | --config FILE]
//
// gen writes deterministic demo and test traffic: sip writes pcapng, j1939
// a candump -l log, j1708 one "(seconds) j1708 HEX" line per message,
// seconds counted from -start. FILE "-" is stdout. The same flags always
// give the same bytes; -workshop and -claim-conflict add the J1939 truck's
// scenarios (a service tool's session, an address-claim conflict). plan
// shows or runs a transmit plan (plan.go); button presses the sim board's
// confirm button (button.go).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"fieldtap/board/sim/j1708gen"
	"fieldtap/board/sim/j1939gen"
	"fieldtap/board/sim/sipgen"
)

const (
	exitOK    = 0
	exitFail  = 1 // the generator or the output failed
	exitUsage = 2 // the command line was wrong

	defaultSeed     = 1
	defaultDuration = time.Minute
	// defaultStart is fixed, not the clock, so output is reproducible.
	defaultStart = "2026-01-01T00:00:00Z"
	stdoutName   = "-"
)

const usage = `usage: fieldtap gen sip|j1939|j1708 -o FILE [-seed N] [-duration 60s] [-start RFC3339]
                    [-workshop] [-claim-conflict]   (j1939 scenarios)
                    [-calls N] [-no-media]          (sip)
       fieldtap plan show|run FILE [--port P] [--config FILE]   (transmit plans)
       fieldtap button press [--file PATH | --config FILE]      (sim board's confirm button)

  sip    SIP calls with RTP over Ethernet, as pcapng
  j1939  a J1939 truck on CAN, as a candump -l log
  j1708  J1708/J1587 messages, as "(seconds) j1708 HEX" lines
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run executes one command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "plan" {
		return plan(args[1:], os.Stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "button" {
		return button(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "gen" {
		fmt.Fprint(stderr, usage+"\nrun \"fieldtap gen -h\" for the flags\n")
		return exitUsage
	}
	return gen(args[1:], stdout, stderr)
}

// genFunc writes one kind of traffic to w.
type genFunc func(w io.Writer, seed int64, start time.Time, d time.Duration, g genFlags) error

// genFlags are the flags of one generator: the events added to the J1939
// truck, and gen sip's call rate and media.
type genFlags struct {
	workshop, claimConflict bool
	calls                   int  // sip; 0: sipgen's default rate
	noMedia                 bool // sip: SIP only, no RTP
}

func generator(kind string) (genFunc, bool) {
	switch kind {
	case "sip":
		return func(w io.Writer, seed int64, start time.Time, d time.Duration, g genFlags) error {
			return sipgen.WritePcapng(w, sipgen.Options{Seed: seed, Start: start, Duration: d, Calls: g.calls, SignallingOnly: g.noMedia})
		}, true
	case "j1939":
		return func(w io.Writer, seed int64, start time.Time, d time.Duration, g genFlags) error {
			return j1939gen.WriteCandump(w, j1939gen.Options{Seed: seed, Start: start, Duration: d,
				Workshop: g.workshop, ClaimConflict: g.claimConflict})
		}, true
	case "j1708":
		return func(w io.Writer, seed int64, start time.Time, d time.Duration, _ genFlags) error {
			return j1708gen.WriteLog(w, j1708gen.Options{Seed: seed, Start: start, Duration: d}, start)
		}, true
	}
	return nil, false
}

// gen parses "KIND flags…" and writes the traffic.
func gen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fieldtap gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage+"\nflags:\n"); fs.PrintDefaults() }
	out := fs.String("o", "", `output file, "-" for stdout (required)`)
	seed := fs.Int64("seed", defaultSeed, "seed: the same seed gives the same bytes")
	dur := fs.Duration("duration", defaultDuration, "span of the traffic")
	startText := fs.String("start", defaultStart, "time of the first packet or frame, RFC 3339")
	var g genFlags
	fs.BoolVar(&g.workshop, "workshop", false, "j1939: a service tool runs a UDS session with the engine, reads DM2 and clears DM1 (DM11), 10 s in")
	fs.BoolVar(&g.claimConflict, "claim-conflict", false, "j1939: a second device claims the body controller's address 20 s in, and loses")
	fs.IntVar(&g.calls, "calls", 0, "sip: calls in the span (0: "+fmt.Sprint(sipgen.DefaultCallsPerMinute)+" a minute; each needs "+sipgen.MinCallSlot.String()+")")
	fs.BoolVar(&g.noMedia, "no-media", false, "sip: SIP only, no RTP (dialog-heavy captures for the memory benchmarks)")

	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		// Only -h may come before the kind.
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "fieldtap gen: the kind comes first")
		fs.Usage()
		return exitUsage
	}
	kind := args[0]
	write, ok := generator(kind)
	if !ok {
		fmt.Fprintf(stderr, "fieldtap gen: unknown kind %q\n", kind)
		fs.Usage()
		return exitUsage
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	start, err := time.Parse(time.RFC3339Nano, *startText)
	var problem string
	switch {
	case fs.NArg() > 0:
		problem = fmt.Sprintf("unexpected argument %q", fs.Arg(0))
	case *out == "":
		problem = "-o is required"
	case *dur <= 0:
		problem = fmt.Sprintf("-duration %v must be positive", *dur)
	case kind != "j1939" && (g.workshop || g.claimConflict):
		problem = "-workshop and -claim-conflict are for j1939"
	case kind != "sip" && (g.calls != 0 || g.noMedia):
		problem = "-calls and -no-media are for sip"
	case g.calls < 0:
		problem = fmt.Sprintf("-calls %d must not be negative", g.calls)
	case err != nil:
		problem = fmt.Sprintf("-start: %v", err)
	}
	if problem != "" {
		fmt.Fprintf(stderr, "fieldtap gen: %s\n", problem)
		fs.Usage()
		return exitUsage
	}
	if err := writeOut(*out, stdout, func(w io.Writer) error { return write(w, *seed, start, *dur, g) }); err != nil {
		fmt.Fprintf(stderr, "fieldtap gen %s: %v\n", kind, err)
		return exitFail
	}
	return exitOK
}

// writeOut runs write on stdout or on a new file, removing the file if
// anything fails so no truncated capture is left behind.
func writeOut(name string, stdout io.Writer, write func(io.Writer) error) error {
	if name == stdoutName {
		return write(stdout)
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}
