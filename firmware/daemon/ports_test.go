package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
	"fieldtap/firmware/config"
	"fieldtap/firmware/supervise"
	"fieldtap/services/budget"
	"fieldtap/services/netdecode"
	"fieldtap/services/ports"
	"fieldtap/services/rtp"
	"fieldtap/services/trunk"
)

// frameSource is a finite source that emits a fixed list of frames.
type frameSource struct {
	frames   []capture.Frame
	counters capture.Counters
}

func (s *frameSource) Name() string         { return "can9" }
func (s *frameSource) Kind() capture.Kind   { return capture.KindCAN }
func (s *frameSource) Origin() string       { return "test" }
func (s *frameSource) Live() bool           { return false }
func (s *frameSource) Stats() capture.Stats { return s.counters.Snapshot() }
func (s *frameSource) Run(ctx context.Context, out *capture.Handoff) error {
	for _, f := range s.frames {
		if err := out.Put(ctx, f); err != nil {
			return err
		}
	}
	s.counters.Exhaust("")
	return nil
}

var _ capture.Source = (*frameSource)(nil)

// TestUndecodableCANFrameIsCounted: a CAN frame whose bytes are not a
// struct can_frame is counted in the port's drops, not silently lost.
func TestUndecodableCANFrameIsCounted(t *testing.T) {
	an := testAnalysers(t, rtp.Options{}, testSource{name: "can9", kind: capture.KindCAN})
	good, _ := wire.EncodeCAN(wire.CANEFF|0x18FECA00, []byte{1, 2})
	bad := []byte{0, 0, 0, 1, 9} // a length byte of 9 and no data
	src := &frameSource{frames: []capture.Frame{
		{Time: time.Unix(1, 0), Link: wire.LinkCANSocketCAN, Data: good},
		{Time: time.Unix(2, 0), Link: wire.LinkCANSocketCAN, Data: bad},
	}}
	p, err := newPort(src, an, portOptions{depth: 8})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	p.run(context.Background(), &wg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	wg.Wait()
	st := p.status()
	if st.Drops[capture.DropUndecodable] != 1 || st.Store.Items != 1 || !st.SourceExhausted {
		t.Errorf("drops %v, stored %d, exhausted %v; want one undecodable frame counted, one stored, and the port exhausted", st.Drops, st.Store.Items, st.SourceExhausted)
	}
	// capture_status shows the port's store and the J1939 stores it feeds,
	// each with its share of the budget.
	if st.Store.Store != "can_frames" || st.Store.MaxBytes <= 0 || st.Store.ShareOfBudget <= 0 || st.Store.Bytes <= 0 {
		t.Errorf("store = %+v, want can_frames with its share and use", st.Store)
	}
	if len(st.Shared) != 2 || st.Shared[0].Store != "j1939_samples" || !st.Shared[0].Shared || st.Shared[0].MaxBytes <= 0 {
		t.Errorf("shared stores = %+v, want the J1939 samples and sessions", st.Shared)
	}
}

// testSource is a port with a name and a kind, for planning a budget.
type testSource struct {
	name string
	kind capture.Kind
}

func (s testSource) Name() string                                { return s.name }
func (s testSource) Kind() capture.Kind                          { return s.kind }
func (s testSource) Origin() string                              { return "test" }
func (s testSource) Live() bool                                  { return false }
func (s testSource) Stats() capture.Stats                        { return capture.Stats{} }
func (s testSource) Run(context.Context, *capture.Handoff) error { return nil }

// testAnalysers builds the stores a box with srcs would have, on the
// default budget of board none.
func testAnalysers(t testing.TB, opt rtp.Options, srcs ...capture.Source) *analysers {
	t.Helper()
	cfg := config.Default()
	cfg.Board, cfg.Store.ExportDir, cfg.Store.DataDir = config.BoardNone, t.TempDir(), t.TempDir()
	_, an := analysersOf(t, cfg, opt, srcs...)
	return an
}

// analysersOf plans cfg's budget for a box with srcs and builds the
// stores of that plan.
func analysersOf(t testing.TB, cfg config.Config, opt rtp.Options, srcs ...capture.Source) (budget.Plan, *analysers) {
	t.Helper()
	plan, err := planBudget(cfg, srcs)
	if err != nil {
		t.Fatal(err)
	}
	an, err := newAnalysers(plan, cfg.Store, opt, netdecode.Options{}, trunk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return plan, an
}

// TestExhaustedOnlyOnceConsumed: a finite port is not exhausted while
// frames it delivered still wait for the analysers, so no answer is
// labelled whole while the stores are still filling.
func TestExhaustedOnlyOnceConsumed(t *testing.T) {
	frame, _ := wire.EncodeCAN(wire.CANEFF|0x18FECA00, []byte{1})
	src := &frameSource{}
	for i := range 5 {
		src.frames = append(src.frames, capture.Frame{Time: time.Unix(int64(i), 0), Link: wire.LinkCANSocketCAN, Data: frame})
	}
	release := make(chan struct{})
	consumed := 0
	sup, err := supervise.New(supervise.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := &port{src: src, sup: sup, stored: func() budget.Use { return budget.Use{} }, shared: func() []budget.Use { return nil }, tunnels: func() map[string]uint64 { return nil },
		live: newLiveness(false, time.Minute, time.Now()), poked: make(chan struct{}, 1),
		consume: func(frames []capture.Frame) int {
			<-release
			consumed += len(frames)
			return 0
		}}
	p.handoff = capture.NewHandoff(8, &p.counters)
	var wg sync.WaitGroup
	p.run(context.Background(), &wg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for deadline := time.Now().Add(10 * time.Second); !src.Stats().Exhausted; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the source never finished")
		}
	}
	if st := p.status(); st.SourceExhausted || st.State != ports.StateCapturing {
		t.Fatalf("exhausted %v, state %s while every frame still waits in the hand-off", st.SourceExhausted, st.State)
	}
	close(release)
	wg.Wait()
	if st := p.status(); !st.SourceExhausted || consumed != 5 || st.State != ports.StateEnded || st.StateSince == nil {
		t.Errorf("exhausted %v, state %s since %v after %d of 5 frames consumed; want exhausted and ended", st.SourceExhausted, st.State, st.StateSince, consumed)
	}
}

// flakySource is a live CAN source whose first attempts deliver one frame
// and then fail, as a USB adapter that glitches; the last attempt
// delivers one frame and runs until cancelled.
type flakySource struct {
	fails    int // attempts that fail
	attempts int
	counters capture.Counters
	running  chan struct{} // closed when the last attempt runs
}

func (s *flakySource) Name() string         { return "can7" }
func (s *flakySource) Kind() capture.Kind   { return capture.KindCAN }
func (s *flakySource) Origin() string       { return "test" }
func (s *flakySource) Live() bool           { return true }
func (s *flakySource) Stats() capture.Stats { return s.counters.Snapshot() }
func (s *flakySource) Run(ctx context.Context, out *capture.Handoff) error {
	s.attempts++
	b, _ := wire.EncodeCAN(wire.CANEFF|0x18FEF100, []byte{byte(s.attempts)})
	out.Offer(capture.Frame{Time: time.Unix(int64(s.attempts), 0), Link: wire.LinkCANSocketCAN, Data: b})
	if s.attempts <= s.fails {
		return errors.New("read /dev/ttyACM0: input/output error")
	}
	close(s.running)
	<-ctx.Done()
	return nil
}

// TestFailedLivePortIsRestartedAndCounted: a live port whose reads fail is
// started again by its supervisor, capture goes on into the same store,
// and capture_status shows the restarts and the last error.
func TestFailedLivePortIsRestartedAndCounted(t *testing.T) {
	src := &flakySource{fails: 2, running: make(chan struct{})}
	an := testAnalysers(t, rtp.Options{}, src)
	p, err := newPort(src, an, portOptions{depth: 8, supervise: supervise.Options{MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	p.run(ctx, &wg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	select {
	case <-src.running:
	case <-time.After(10 * time.Second):
		t.Fatalf("the source was not restarted: %+v", p.status())
	}
	cancel()
	wg.Wait()
	st := p.status()
	if st.Restarts != 2 || st.LastError != "read /dev/ttyACM0: input/output error" || st.LastErrorTime == nil || st.StoppedEarly != "" {
		t.Errorf("status restarts %d last error %q at %v, stopped %q; want 2 restarts and the read error", st.Restarts, st.LastError, st.LastErrorTime, st.StoppedEarly)
	}
	if st.Frames != 3 || st.Store.Items != 3 {
		t.Errorf("frames %d, stored %d; want one from each of the 3 attempts", st.Frames, st.Store.Items)
	}
}
