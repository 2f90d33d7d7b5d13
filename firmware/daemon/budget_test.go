package daemon

import (
	"errors"

	"fieldtap/board"
	"fieldtap/board/sim"
	"fieldtap/services/recorder"
	"strings"
	"testing"

	"fieldtap/drivers/capture"
	"fieldtap/firmware/config"
	"fieldtap/services/budget"
	"fieldtap/services/rtp"
)

// TestPlanFitsTheBudget: with every kind of port, every store has a share,
// the shares sum within the stores' part of the budget, and the weighted
// ones are what the pool had left.
func TestPlanFitsTheBudget(t *testing.T) {
	cfg := config.Default()
	cfg.Board = config.BoardNone
	srcs := []capture.Source{
		testSource{name: "span0", kind: capture.KindEthernet},
		testSource{name: "can0", kind: capture.KindCAN},
		testSource{name: "j1708", kind: capture.KindJ1708},
	}
	p, err := planBudget(cfg, srcs)
	if err != nil {
		t.Fatal(err)
	}
	if p.Budget != config.DefaultBudgetMiB<<20 || p.Sum() > p.Pool || p.Pool-p.Sum() > 16 {
		t.Errorf("budget %d, pool %d, shares sum %d: want the default budget and the pool used, not exceeded", p.Budget, p.Pool, p.Sum())
	}
	for _, want := range []struct{ store, port string }{
		{budget.Frames, "span0"}, {budget.SIPDialogs, ""}, {budget.SIPMessages, ""}, {budget.RTP, ""},
		{budget.CANFrames, "can0"}, {budget.CANTables, "can0"}, {budget.J1939Tables, "can0"},
		{budget.J1939Samples, ""}, {budget.J1939Sessions, ""}, {budget.J1708Messages, "j1708"},
		{budget.J1708Tables, "j1708"}, {budget.Handoff, "span0"},
	} {
		if n, ok := p.Share(want.store, want.port); !ok || n <= 0 {
			t.Errorf("no share for %s[%s]", want.store, want.port)
		}
	}
	an, err := newAnalysers(p, cfg.Store, rtp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := an.budgetStatus()
	if st.SharesBytes != p.Sum() || len(st.Stores) != len(p.Shares) || st.From != "the default for board none" {
		t.Errorf("budget view %+v does not show the plan", st)
	}
}

// TestStartRefusesBoundsPastTheBudget: an explicit frame bound larger than
// the stores' part of the budget stops start-up, naming the figures.
func TestStartRefusesBoundsPastTheBudget(t *testing.T) {
	cfg := config.Default()
	cfg.Board, cfg.MemoryLimitMiB = config.BoardNone, 64
	cfg.Store.BytesPerPort = 48 << 20
	_, err := planBudget(cfg, []capture.Source{testSource{name: "span0", kind: capture.KindEthernet}})
	if !errors.Is(err, budget.ErrOverBudget) {
		t.Fatalf("err = %v, want ErrOverBudget", err)
	}
	for _, want := range []string{"frames[span0] 48.0 MiB (store.bytes_per_port)", "64.0 MiB budget (memory_limit_mib)", "25.6 MiB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
}

// TestEveryBoardFitsItsBudget: each shipped board profile, with every port
// it names and the recorder on, starts within its own memory budget (the
// qemu-virt board of hwtest is one: its 128 MiB once did not fit the
// recorder's fixed 16 MiB beside the AF_PACKET ring), and the recorder's
// share bounds what it keeps pending.
func TestEveryBoardFitsItsBudget(t *testing.T) {
	for _, name := range board.Names() {
		t.Run(name, func(t *testing.T) {
			prof, err := board.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			cfg := config.Default()
			cfg.Board = name
			cfg.Recorder.Enabled = true
			var srcs []capture.Source
			if name == "sim" {
				srcs = sim.Ports(sim.Options{Seed: sim.DefaultSeed, Workshop: true})
			}
			for _, pc := range prof.Ports {
				src, err := openPort(pc)
				if err != nil {
					t.Fatal(err)
				}
				srcs = append(srcs, src)
			}
			p, err := planBudget(cfg, srcs)
			if err != nil {
				t.Fatalf("%d ports: %v", len(srcs), err)
			}
			rec, ok := p.Share(budget.Recorder, "")
			if !ok || rec < 2*recorder.MinPendingBytes || rec > 2*recorder.DefaultMaxPendingBytes {
				t.Errorf("recorder share %d (present %v): want within the recorder's own limits", rec, ok)
			}
			t.Logf("%s: %d ports, budget %s, shares %s of %s, recorder %s",
				name, len(srcs), budget.MiB(p.Budget), budget.MiB(p.Sum()), budget.MiB(p.Pool), budget.MiB(rec))
		})
	}
}
