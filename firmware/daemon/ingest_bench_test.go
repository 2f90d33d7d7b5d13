package daemon

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"
	"time"

	"fieldtap/board/sim/j1939gen"
	"fieldtap/board/sim/sipgen"
	"fieldtap/drivers/canlog"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/pcapfile"
	"fieldtap/firmware/config"
	"fieldtap/services/netdecode"
	"fieldtap/services/rtp"
)

// The daemon's whole ingest path, in process: a file source, the hand-off,
// the consumer and every store, as fieldtapd --board none --source FILE
// runs them. CPU profiles of these (go test -bench Ingest -cpuprofile) are
// how the gap between the decoders' benchmarks and the daemon was found
// (docs/benchmarks.md).

var benchStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// benchSpan is the generated traffic's length: an hour by default; a few
// minutes keeps a run under valgrind --tool=callgrind short.
var benchSpan = flag.Duration("bench-span", time.Hour, "span of the traffic the ingest benchmarks generate")

// benchFile writes a generated capture once per benchmark.
func benchFile(b *testing.B, name string, write func(io.Writer) error) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := write(f); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// ingest runs one source to the end through a fresh set of stores and
// returns the frames consumed. The runtime's soft limit is the budget, as
// fieldtapd sets it, so the collector works as it does in the daemon.
func ingest(b *testing.B, src capture.Source) uint64 {
	return ingestWith(b, src, nil)
}

// ingestWith is ingest whose port consumes frames with consume(an, p)
// when it is not nil, instead of the analysers' own consumer.
func ingestWith(b *testing.B, src capture.Source, consume func(an *analysers, p *port) consumer) uint64 {
	cfg := config.Default()
	cfg.Board, cfg.Store.ExportDir, cfg.Store.DataDir = config.BoardNone, b.TempDir(), b.TempDir()
	total, _, err := cfg.Budget()
	if err != nil {
		b.Fatal(err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(total))
	_, an := analysersOf(b, cfg, rtp.Options{}, src)
	p, err := newPort(src, an, portOptions{depth: cfg.Store.HandoffDepth})
	if err != nil {
		b.Fatal(err)
	}
	if consume != nil {
		p.consume = consume(an, p)
	}
	var wg sync.WaitGroup
	p.run(context.Background(), &wg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	wg.Wait()
	return p.counters.Snapshot().Frames
}

func BenchmarkIngestSIPFile(b *testing.B) {
	path := benchFile(b, "calls.pcapng", func(w io.Writer) error {
		return sipgen.WritePcapng(w, sipgen.Options{Seed: 1, Start: benchStart, Duration: *benchSpan})
	})
	var frames uint64
	cpu0 := processCPU(b)
	for b.Loop() {
		frames += ingest(b, pcapfile.New("file1", path))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(frames), "cpu-ns/frame")
}

func BenchmarkIngestCANLog(b *testing.B) {
	path := benchFile(b, "truck.log", func(w io.Writer) error {
		return j1939gen.WriteCandump(w, j1939gen.Options{Seed: 1, Start: benchStart, Duration: *benchSpan})
	})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var frames uint64
	for b.Loop() {
		frames += ingest(b, canlog.New("file1", path, log))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
}

// processCPU is the process's user+sys CPU time, collector included: on a
// shared machine ns/frame moves with the load, cpu-ns/frame much less.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadFrames reads a capture into memory, so a benchmark can time the
// consumer alone.
func loadFrames(b *testing.B, src capture.Source) []capture.Frame {
	b.Helper()
	var c capture.Counters
	h := capture.NewHandoff(capture.DefaultHandoffDepth, &c)
	go func() { src.Run(context.Background(), h); h.Close() }()
	var frames []capture.Frame
	for {
		batch, ok := h.Receive()
		if !ok {
			return frames
		}
		for _, f := range batch.Frames {
			f.Data = append([]byte(nil), f.Data...)
			frames = append(frames, f)
		}
		h.Release(batch)
	}
}

// consumeAll times the consumer of one port kind over frames, in batches
// as the hand-off delivers them, through stores that stay full.
func consumeAll(b *testing.B, kind capture.Kind, frames []capture.Frame) {
	src := testSource{name: "file1", kind: kind}
	an := testAnalysers(b, rtp.Options{}, src)
	consume, _, err := an.attach(src.name, kind)
	if err != nil {
		b.Fatal(err)
	}
	const batch = 1024
	n := 0
	for b.Loop() {
		for i := 0; i < len(frames); i += batch {
			consume(frames[i:min(i+batch, len(frames))])
		}
		n += len(frames)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/frame")
}

func BenchmarkConsumeSIP(b *testing.B) {
	path := benchFile(b, "calls.pcapng", func(w io.Writer) error {
		return sipgen.WritePcapng(w, sipgen.Options{Seed: 1, Start: benchStart, Duration: *benchSpan})
	})
	consumeAll(b, capture.KindEthernet, loadFrames(b, pcapfile.New("file1", path)))
}

func BenchmarkConsumeCAN(b *testing.B) {
	path := benchFile(b, "truck.log", func(w io.Writer) error {
		return j1939gen.WriteCandump(w, j1939gen.Options{Seed: 1, Start: benchStart, Duration: *benchSpan})
	})
	consumeAll(b, capture.KindCAN, loadFrames(b, canlog.New("file1", path, slog.New(slog.NewTextHandler(io.Discard, nil)))))
}

// BenchmarkIngestSIPSignalling is the dialog-heavy case: calls back to
// back without media, every frame a SIP message (issue #14's 100 000
// dialogs came from such traffic).
func BenchmarkIngestSIPSignalling(b *testing.B) {
	calls := int(*benchSpan / sipgen.MinCallSlot)
	path := benchFile(b, "signalling.pcapng", func(w io.Writer) error {
		return sipgen.WritePcapng(w, sipgen.Options{Seed: 1, Start: benchStart, Duration: *benchSpan, Calls: calls, SignallingOnly: true})
	})
	var frames uint64
	cpu0 := processCPU(b)
	for b.Loop() {
		frames += ingest(b, pcapfile.New("file1", path))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(frames), "cpu-ns/frame")
}

// BenchmarkIngestFrames is BenchmarkIngestSIPSignalling's capture with
// no SIP analysis: the file read, the hand-off, the frame store and the
// network decoder with a handler that drops every payload, as the port's
// consumer runs them. It is the floor of the whole ingest, what the
// analysers' cost is added to.
func BenchmarkIngestFrames(b *testing.B) {
	calls := int(*benchSpan / sipgen.MinCallSlot)
	path := benchFile(b, "signalling.pcapng", func(w io.Writer) error {
		return sipgen.WritePcapng(w, sipgen.Options{Seed: 1, Start: benchStart, Duration: *benchSpan, Calls: calls, SignallingOnly: true})
	})
	floor := func(an *analysers, p *port) consumer {
		fs := an.frames[p.src.Name()]
		dec := netdecode.New(netdecode.Options{}, discard{})
		return func(frames []capture.Frame) int {
			storeFrames(fs, frames)
			dec.Hold()
			defer dec.Release()
			for i := range frames {
				f := &frames[i]
				dec.Decode(f.Time, f.Link, f.Data)
			}
			return 0
		}
	}
	var frames uint64
	cpu0 := processCPU(b)
	for b.Loop() {
		frames += ingestWith(b, pcapfile.New("file1", path), floor)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(frames), "cpu-ns/frame")
}

// discard is a netdecode.Handler that drops every payload.
type discard struct{}

func (discard) UDP(*netdecode.Datagram) {}

func (discard) TCP(_ *netdecode.Stream, _ time.Time, data []byte) int { return len(data) }
