package canlog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
	"fieldtap/drivers/wire"
)

// benchLog is a -l log shaped like a truck's J1939 bus: 29-bit ids with
// eight data bytes, a frame every half millisecond.
func benchLog(frames int) []byte {
	var b []byte
	t := time.Unix(1767225600, 0)
	data := []byte{0x6B, 0x49, 0xE0, 0xFF, 0x00, 0x00, 0x02, 0x10}
	for i := range frames {
		data[0], data[5] = byte(i), byte(i>>8)
		id := uint32(0x18EEFF00|i%251) | wire.CANEFF
		b = wire.AppendCandump(b, t.Add(time.Duration(i)*524*time.Microsecond), "can0", id, data)
	}
	return b
}

// BenchmarkReadFile is the reading and parsing of a log, frames dropped.
func BenchmarkReadFile(b *testing.B) {
	log := benchLog(100_000)
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	frames := 0
	cpu0 := cpuTime(b)
	for b.Loop() {
		err := ReadFile(bytes.NewReader(log), func(int, *wire.CandumpRecord) error {
			frames++
			return nil
		}, func(n int, _ string, err error) { b.Fatalf("line %d: %v", n, err) })
		if err != nil {
			b.Fatal(err)
		}
	}
	reportPerFrame(b, cpu0, frames)
}

// BenchmarkSource reads a log file through the hand-off into a consumer
// that only releases: the driver's whole cost per frame.
func BenchmarkSource(b *testing.B) {
	path := filepath.Join(b.TempDir(), "x.log")
	if err := os.WriteFile(path, benchLog(100_000), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	frames := 0
	cpu0 := cpuTime(b)
	for b.Loop() {
		var c capture.Counters
		h := capture.NewHandoff(capture.DefaultHandoffDepth, &c)
		go func() { New("f", path, discard()).Run(context.Background(), h); h.Close() }()
		frames += capturetest.Drain(h)
	}
	reportPerFrame(b, cpu0, frames)
}

// reportPerFrame reports wall and CPU time a frame. The CPU time (user and
// system, every goroutine) is the figure to compare on a shared machine:
// it leaves out the time other processes held the cores.
func reportPerFrame(b *testing.B, cpu0 time.Duration, frames int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
	b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(frames), "cpu-ns/frame")
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
