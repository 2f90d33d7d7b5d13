package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/board/sim/j1939gen"
)

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{name: "nothing", args: nil, want: exitUsage},
		{name: "unknown subcommand", args: []string{"capture"}, want: exitUsage},
		{name: "gen without kind", args: []string{"gen"}, want: exitUsage},
		{name: "flags before kind", args: []string{"gen", "-o", "-", "sip"}, want: exitUsage},
		{name: "unknown kind", args: []string{"gen", "can", "-o", "-"}, want: exitUsage},
		{name: "unknown flag", args: []string{"gen", "j1939", "-o", "-", "-calls", "3"}, want: exitUsage},
		{name: "negative calls", args: []string{"gen", "sip", "-o", "-", "-calls", "-1"}, want: exitUsage},
		{name: "no output", args: []string{"gen", "j1708"}, want: exitUsage},
		{name: "zero duration", args: []string{"gen", "j1708", "-o", "-", "-duration", "0s"}, want: exitUsage},
		{name: "bad duration", args: []string{"gen", "j1708", "-o", "-", "-duration", "soon"}, want: exitUsage},
		{name: "bad start", args: []string{"gen", "j1939", "-o", "-", "-start", "2026-01-01"}, want: exitUsage},
		{name: "stray argument", args: []string{"gen", "j1939", "-o", "-", "extra"}, want: exitUsage},
		{name: "j1939 scenario on sip", args: []string{"gen", "sip", "-o", "-", "-workshop"}, want: exitUsage},
		{name: "help", args: []string{"gen", "-h"}, want: exitOK},
		{name: "help after kind", args: []string{"gen", "sip", "-h"}, want: exitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(tc.args, &stdout, &stderr); got != tc.want {
				t.Fatalf("run(%q) = %d, want %d; stderr:\n%s", tc.args, got, tc.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), "usage: fieldtap gen") || stdout.Len() != 0 {
				t.Fatalf("run(%q): stdout %q, stderr %q; want usage on stderr only", tc.args, stdout.String(), stderr.String())
			}
		})
	}
}

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		prefix string // how the output starts
	}{
		{name: "sip", args: []string{"gen", "sip", "-duration", "20s", "-seed", "4"}, prefix: "\x0a\x0d\x0d\x0a"},
		{name: "j1939", args: []string{"gen", "j1939", "-duration", "2s"}, prefix: "(1767225600.000000) can0 18EEFF00#"},
		{name: "j1939 workshop", args: []string{"gen", "j1939", "-duration", "12s", "-workshop", "-claim-conflict"}, prefix: "(1767225600.000000) can0 18EEFF00#"},
		{name: "j1708", args: []string{"gen", "j1708", "-duration", "2s", "-start", "2026-03-01T08:00:00.5Z"}, prefix: "(0.000000) j1708 80"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(append(tc.args, "-o", "-"), &stdout, &stderr); got != exitOK || stderr.Len() != 0 {
				t.Fatalf("to stdout: exit %d, stderr %q", got, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tc.prefix) {
				t.Fatalf("output starts %q, want %q", stdout.String()[:min(40, stdout.Len())], tc.prefix)
			}
			file := filepath.Join(dir, tc.name)
			if got := run(append(tc.args, "-o", file), &bytes.Buffer{}, &stderr); got != exitOK {
				t.Fatalf("to a file: exit %d, stderr %q", got, stderr.String())
			}
			b, err := os.ReadFile(file)
			if err != nil || !bytes.Equal(b, stdout.Bytes()) {
				t.Fatalf("file (%v) differs from stdout for the same flags", err)
			}
		})
	}
}

// TestDefaults pins what the flags default to: a fixed start and seed, so
// a bare command is reproducible.
func TestDefaults(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if got := run([]string{"gen", "j1939", "-o", "-"}, &stdout, &stderr); got != exitOK {
		t.Fatalf("exit %d, stderr %q", got, stderr.String())
	}
	var want bytes.Buffer
	o := j1939gen.Options{Seed: defaultSeed, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Duration: time.Minute}
	if err := j1939gen.WriteCandump(&want, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout.Bytes(), want.Bytes()) {
		t.Fatal("default flags differ from seed 1, 2026-01-01T00:00:00Z, one minute")
	}
}

func TestFailures(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		file string // must not be left behind
	}{
		{name: "unwritable", args: []string{"gen", "j1708", "-o", filepath.Join(dir, "missing", "x.log")}},
		{name: "too short for a call", args: []string{"gen", "sip", "-duration", "1s", "-o", filepath.Join(dir, "short.pcapng")},
			file: filepath.Join(dir, "short.pcapng")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := run(tc.args, &bytes.Buffer{}, &stderr); got != exitFail || !strings.HasPrefix(stderr.String(), "fieldtap gen ") {
				t.Fatalf("exit %d, stderr %q; want %d and a message", got, stderr.String(), exitFail)
			}
			if _, err := os.Stat(tc.file); tc.file != "" && err == nil {
				t.Fatalf("%s left behind", tc.file)
			}
		})
	}
}
