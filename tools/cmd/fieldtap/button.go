package main

// fieldtap button press [--file PATH | --config FILE]
//
// presses the simulated board's confirm button: it writes a fresh press
// into transmit.confirm_file, which fieldtapd on the sim board watches
// while a plan waits (transmit.require_button). A real board's button is a
// GPIO line no command can press: that is the point of it.

import (
	"flag"
	"fmt"
	"io"

	"fieldtap/board"
	"fieldtap/firmware/config"
)

const buttonUsage = `usage: fieldtap button press [--file PATH | --config FILE]

  press  press the sim board's confirm button: write a fresh press into the
         file fieldtapd watches (transmit.confirm_file, or --file). Only a
         press made while a plan waits counts; a real board's button is a
         GPIO line, which no command can press.
`

func button(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "press" {
		fmt.Fprint(stderr, buttonUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("fieldtap button press", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "", "the confirm file (default: transmit.confirm_file of --config)")
	cfgPath := fs.String("config", "", "fieldtapd configuration naming transmit.confirm_file")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
		fmt.Fprint(stderr, buttonUsage)
		return exitUsage
	}
	path := *file
	if path == "" && *cfgPath != "" {
		cfg, err := config.Load(*cfgPath)
		if err != nil {
			fmt.Fprintln(stderr, "fieldtap button press:", err)
			return exitUsage
		}
		if cfg.Board != "sim" || cfg.Transmit.ConfirmFile == "" {
			fmt.Fprintf(stderr, "fieldtap button press: %s names no sim-board confirm file (board %q, transmit.confirm_file %q); a real board's button is pressed by hand\n",
				*cfgPath, cfg.Board, cfg.Transmit.ConfirmFile)
			return exitUsage
		}
		path = cfg.Transmit.ConfirmFile
	}
	if path == "" {
		fmt.Fprintln(stderr, "fieldtap button press: --file or --config is required")
		fmt.Fprint(stderr, buttonUsage)
		return exitUsage
	}
	if err := board.PressFile(path); err != nil {
		fmt.Fprintln(stderr, "fieldtap button press:", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "pressed the confirm button (%s)\n", path)
	return exitOK
}
