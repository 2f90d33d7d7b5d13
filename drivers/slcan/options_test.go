package slcan

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestOptionsChecked(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantErr string // substring; "" = valid
	}{
		{name: "defaults", o: Options{Device: "/dev/ttyACM0"}},
		{name: "1M", o: Options{Device: "x", Bitrate: 1_000_000}},
		{name: "10k", o: Options{Device: "x", Bitrate: 10_000}},
		{name: "no device", o: Options{}, wantErr: "no serial device"},
		{name: "bitrate without code", o: Options{Device: "x", Bitrate: 33_333}, wantErr: "33333"},
		{name: "bad baud", o: Options{Device: "x", Baud: 12}, wantErr: "baud 12"},
		{name: "ack timeout too short", o: Options{Device: "x", AckTimeout: time.Millisecond}, wantErr: "ack timeout"},
		{name: "late reply wait too long", o: Options{Device: "x", LateReplyWait: time.Hour}, wantErr: "late reply wait"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.opts.Baud != DefaultBaud || s.opts.AckTimeout != DefaultAckTimeout || s.opts.LateReplyWait != DefaultLateReplyWait || s.opts.Bitrate == 0 {
				t.Errorf("defaults not applied: %+v", s.opts)
			}
		})
	}
}

func TestBitrateCommand(t *testing.T) {
	for i, b := range []int{10_000, 20_000, 50_000, 100_000, 125_000, 250_000, 500_000, 800_000, 1_000_000} {
		t.Run(fmt.Sprint(b), func(t *testing.T) {
			got, err := BitrateCommand(b)
			if want := "S" + string(rune('0'+i)); err != nil || got != want {
				t.Errorf("BitrateCommand(%d) = %q, %v; want %q", b, got, err, want)
			}
		})
	}
}

func TestReordered(t *testing.T) {
	tests := []struct {
		name     string
		prev, ts int
		elapsed  time.Duration
		want     bool
	}{
		{name: "forward", prev: 100, ts: 150, elapsed: 50 * time.Millisecond},
		{name: "same ms", prev: 100, ts: 100},
		{name: "wrap forward", prev: 59990, ts: 5, elapsed: 15 * time.Millisecond},
		{name: "backwards", prev: 500, ts: 400, elapsed: time.Millisecond, want: true},
		{name: "backwards across wrap", prev: 3, ts: 59995, elapsed: time.Millisecond, want: true},
		{name: "long host gap is not judged", prev: 500, ts: 400, elapsed: 50 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := reordered(tc.prev, tc.ts, tc.elapsed); got != tc.want {
				t.Errorf("reordered(%d, %d, %v) = %v", tc.prev, tc.ts, tc.elapsed, got)
			}
		})
	}
}
