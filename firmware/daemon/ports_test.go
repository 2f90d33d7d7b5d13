package daemon

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
	"fieldtap/firmware/config"
	"fieldtap/services/rtp"
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
	p, err := newPort(src, 8, an)
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
func testAnalysers(t *testing.T, opt rtp.Options, srcs ...capture.Source) *analysers {
	t.Helper()
	cfg := config.Default()
	cfg.Board, cfg.Store.ExportDir, cfg.Store.DataDir = config.BoardNone, t.TempDir(), t.TempDir()
	plan, err := planBudget(cfg, srcs)
	if err != nil {
		t.Fatal(err)
	}
	an, err := newAnalysers(plan, cfg.Store, opt)
	if err != nil {
		t.Fatal(err)
	}
	return an
}
