package sip_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldtap/tools/refdata"
)

// TestPortCallIDs: sip-rtp-g711.pcap's two calls begin at
// 1480171979.666393 (1-1966@10.0.2.20) and 1480171988.286194
// (1-1968@10.0.2.20), tshark 4.0.17's first frame of each Call-ID. The
// whole ring carries both; a window from the second call's first frame
// on carries only it; keep leaves out what the caller does not hold.
func TestPortCallIDs(t *testing.T) {
	b := newBox(t, t.TempDir())
	b.feedFile(t, filepath.Join(refdata.Dir(t, "sip"), "sip-rtp-g711.pcap"))
	ctx := context.Background()
	all := func(string) bool { return true }
	second := time.Unix(1480171988, 286194000)
	for _, c := range []struct {
		name     string
		from, to time.Time
		keep     func(string) bool
		want     []string
	}{
		{name: "whole ring", keep: all, want: []string{"1-1966@10.0.2.20", "1-1968@10.0.2.20"}},
		{name: "from the second call", from: second, keep: all, want: []string{"1-1968@10.0.2.20"}},
		{name: "before the second call", to: second, keep: all, want: []string{"1-1966@10.0.2.20"}},
		{name: "kept only", keep: func(id string) bool { return strings.HasPrefix(id, "1-1968") }, want: []string{"1-1968@10.0.2.20"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pc, err := b.ex.PortCallIDs(ctx, testPort, c.from, c.to, c.keep)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(pc.CallIDs)); !slices.Equal(got, c.want) {
				t.Errorf("Call-IDs %v, want %v", got, c.want)
			}
			if pc.Cut || pc.Frames == 0 || pc.RingFrom.IsZero() {
				t.Errorf("scan %+v: want frames, not cut, the ring's oldest time", pc)
			}
		})
	}
	if _, err := b.ex.PortCallIDs(ctx, "span9", time.Time{}, time.Time{}, all); err == nil || !strings.Contains(err.Error(), `"span9"`) {
		t.Errorf("unknown port: %v, want an error naming it", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.ex.PortCallIDs(done, testPort, time.Time{}, time.Time{}, all); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
