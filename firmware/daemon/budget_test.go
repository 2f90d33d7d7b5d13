package daemon

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"fieldtap/board"
	"fieldtap/board/sim"
	"fieldtap/drivers/capture"
	"fieldtap/firmware/config"
	"fieldtap/services/budget"
	"fieldtap/services/netdecode"
	"fieldtap/services/recorder"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/services/trunk"
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
	an, err := newAnalysers(p, cfg.Store, rtp.Options{}, netdecode.Options{}, trunk.Options{})
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

// oldDialogBound is the SIP dialog store's count bound before issue #33,
// whatever the budget: 100,000.
const oldDialogBound = 100_000

// spanOnly plans a box with one SPAN port on a budget of mib MiB and
// builds its stores.
func spanOnly(t *testing.T, mib int) (budget.Plan, *analysers) {
	t.Helper()
	cfg := config.Default()
	cfg.Board, cfg.MemoryLimitMiB, cfg.Store.ExportDir, cfg.Store.DataDir = config.BoardNone, mib, t.TempDir(), t.TempDir()
	return analysersOf(t, cfg, rtp.Options{}, testSource{name: "span0", kind: capture.KindEthernet})
}

// TestDialogBoundFollowsTheBudget: the SIP dialog store's count bound is
// its byte share over the least a dialog weighs, so it grows with the
// budget, past the old fixed 100,000 on a large one, while the shares
// stay within the pool; capture_status shows it.
func TestDialogBoundFollowsTheBudget(t *testing.T) {
	prev := 0
	for _, mib := range []int{config.DefaultBudgetMiB, 512, 2000} {
		p, an := spanOnly(t, mib)
		share, _ := p.Share(budget.SIPDialogs, "")
		got := an.sip.DialogStats().Limits.Items
		if want := int(share / sip.MinDialogBytes()); got != want || got <= prev {
			t.Errorf("%d MiB: dialog bound %d, want %d (share %d / %d B) and more than %d", mib, got, want, share, sip.MinDialogBytes(), prev)
		}
		if p.Sum() > p.Pool {
			t.Errorf("%d MiB: shares sum to %d, over the pool %d", mib, p.Sum(), p.Pool)
		}
		for _, u := range an.budgetStatus().Stores {
			if u.Store == budget.SIPDialogs && (u.MaxItems != got || u.MaxBytes != share) {
				t.Errorf("%d MiB: capture_status shows sip_dialogs max_items %d max_bytes %d, want %d and %d", mib, u.MaxItems, u.MaxBytes, got, share)
			}
		}
		t.Logf("%d MiB: sip_dialogs share %s, at most %d dialogs", mib, budget.MiB(share), got)
		prev = got
	}
	if prev <= oldDialogBound {
		t.Errorf("a 2000 MiB budget bounds the dialogs at %d: want more than %d", prev, oldDialogBound)
	}
}

// TestLargeBudgetHoldsMoreThanTheOldBound feeds a SPAN port 2,000 INVITEs
// more than the old fixed bound, one dialog each, on a 2000 MiB budget:
// all are kept, none evicted. The test process peaks near 330 MB RSS.
func TestLargeBudgetHoldsMoreThanTheOldBound(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: holds over 100,000 dialogs")
	}
	_, an := spanOnly(t, 2000)
	consume, _, err := an.attach("span0", capture.KindEthernet)
	if err != nil {
		t.Fatal(err)
	}
	const n = oldDialogBound + 2000
	const batch = 256
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 3, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 3, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IPv4(10, 3, 0, 1), DstIP: net.IPv4(10, 3, 0, 2)}
	udp := &layers.UDP{SrcPort: 5060, DstPort: 5060}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	frames := make([]capture.Frame, 0, batch)
	for i := range n {
		invite := fmt.Sprintf("INVITE sip:2000@10.3.0.2 SIP/2.0\r\nVia: SIP/2.0/UDP 10.3.0.1:5060;branch=z9hG4bK%d\r\nFrom: <sip:1000@10.3.0.1>;tag=a\r\n"+
			"To: <sip:2000@10.3.0.2>\r\nCall-ID: %d\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n", i, i)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, gopacket.Payload(invite)); err != nil {
			t.Fatal(err)
		}
		frames = append(frames, capture.Frame{Time: t0.Add(time.Duration(i) * time.Millisecond), Link: wire.LinkEthernet, Data: buf.Bytes(), OrigLen: len(buf.Bytes())})
		if len(frames) == batch || i == n-1 {
			consume(frames)
			frames = frames[:0]
		}
	}
	st := an.sip.DialogStats()
	if st.Items != n || st.Evicted != 0 {
		t.Errorf("%d dialogs kept, %d evicted (bound %d, %d of %d bytes): want all %d kept", st.Items, st.Evicted, st.Limits.Items, st.Bytes, st.Limits.Bytes, n)
	}
}

// TestProfileReservationFitsOrShrinks: the sim profile's one open_capture
// port is reserved beside the sim board's own ports; with another CAN
// port it no longer fits and none is reserved, and the box still plans;
// store.opened_captures = 2, set by the operator, refuses as before.
func TestProfileReservationFitsOrShrinks(t *testing.T) {
	cfg := config.Default()
	cfg.Board = "sim"
	cfg.Recorder.Enabled = true
	srcs := sim.Ports(sim.Options{Seed: sim.DefaultSeed})
	if n, err := openedCaptures(cfg, srcs); err != nil || n != 1 {
		t.Fatalf("sim board alone: %d reserved, %v; want the profile's 1", n, err)
	}
	more := append(slices.Clone(srcs), testSource{name: "can1", kind: capture.KindCAN})
	if n, err := openedCaptures(cfg, more); err != nil || n != 0 {
		t.Errorf("with another CAN port: %d reserved, %v; want 0", n, err)
	}
	if _, err := planBudget(cfg, more); err != nil {
		t.Errorf("with another CAN port the box does not plan: %v", err)
	}
	cfg.Store.OpenedCaptures = new(2)
	if _, err := planBudget(cfg, srcs); err == nil {
		t.Error("an explicit store.opened_captures = 2 that does not fit was planned")
	}
}
