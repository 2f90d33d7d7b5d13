package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/firmware/loglimit"
)

// TestBadLinesAreCountedNotLogged reads a candump file of 200,000 bad
// lines (the file that once wrote 31 MB of stderr): the port counts every
// one, the log shows a burst of them and a count of the rest.
func TestBadLinesAreCountedNotLogged(t *testing.T) {
	const bad = 200_000
	var b bytes.Buffer
	b.WriteString("(1.000000) can0 18FEF100#FF00000000000000\n")
	for i := range bad {
		fmt.Fprintf(&b, "garbage line %d\n", i)
	}
	path := filepath.Join(t.TempDir(), "bad.log")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	cmd, url, stderr := startHTTP(t, "--board", "none", "--source", path)
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer s.Close()
	deadline := time.Now().Add(giveUp)
	for !exhausted(captureStatus(t, ctx, s), "file1") {
		if time.Now().After(deadline) {
			t.Fatal("the file was never read to its end")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p := byName(captureStatus(t, ctx, s))["file1"]; p.Errors["malformed_line"] != bad {
		t.Errorf("port counts %v, want %d malformed lines", p.Errors, bad)
	}
	stopDaemon(t, cmd, stderr)
	log := stderr.String()
	written := strings.Count(log, `msg="skipping malformed candump line"`)
	var suppressed int
	for _, m := range regexp.MustCompile(`msg="`+loglimit.SuppressedMsg+`" kind="skipping malformed candump line" (?:port|file)=\S+ suppressed=(\d+)`).FindAllStringSubmatch(log, -1) {
		n, _ := strconv.Atoi(m[1])
		suppressed += n
	}
	t.Logf("%d bad lines: %d logged, %d counted as suppressed, %d bytes of stderr", bad, written, suppressed, len(log))
	if written > loglimit.DefaultBurst*2 || written+suppressed != bad {
		t.Errorf("%d bad lines logged and %d counted as suppressed, want a burst and the rest counted (%d in all)", written, suppressed, bad)
	}
	if len(log) > 64<<10 {
		t.Errorf("stderr is %d bytes", len(log))
	}
}
