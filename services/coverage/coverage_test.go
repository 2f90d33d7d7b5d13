package coverage

import (
	"strings"
	"testing"
	"time"

	"fieldtap/services/budget"
	"fieldtap/services/ports"
)

var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

func at(s int) time.Time         { return t0.Add(time.Duration(s) * time.Second) }
func ptr(t time.Time) *time.Time { return &t }

// box is a SPAN port and a CAN port, a minute of traffic each.
func box() Inputs {
	return Inputs{
		Ports: []ports.Status{
			{Name: "span0", Kind: "ethernet", State: ports.StateCapturing, StateSince: ptr(at(0)), FirstTime: ptr(at(0)), LastTime: ptr(at(60))},
			{Name: "can0", Kind: "can", State: ports.StateCapturing, FirstTime: ptr(at(1)), LastTime: ptr(at(59))},
		},
		Stores: []budget.Use{
			{Store: budget.SIPDialogs, Items: 10, Oldest: ptr(at(0))},
			{Store: budget.SIPMessages, Items: 40, Oldest: ptr(at(0))},
			{Store: budget.CANFrames, Port: "can0", Items: 1000, Oldest: ptr(at(1))},
			{Store: budget.Handoff, Port: "can0", Reserved: true},
		},
	}
}

func TestBuild(t *testing.T) {
	for _, tc := range []struct {
		name     string
		q        Query
		edit     func(*Inputs)
		complete bool
		from, to time.Time
		stores   []string
		ports    []string
		warn     []string // each must appear in the warnings
	}{
		{name: "whole", q: Query{Families: SIP}, complete: true, from: at(0), to: at(60),
			stores: []string{"sip_dialogs", "sip_messages"}, ports: []string{"span0"}},
		{name: "a family reads its own kind's ports and stores only", q: Query{Families: CAN}, complete: true, from: at(1), to: at(59),
			stores: []string{"can_frames"}, ports: []string{"can0"}},
		{name: "evicted without a window: covered from the oldest held", q: Query{Families: SIP},
			edit: func(in *Inputs) {
				in.Stores[0] = budget.Use{Store: budget.SIPDialogs, Items: 10, Evicted: 90, Oldest: ptr(at(30)), EvictedTo: at(29)}
			},
			from: at(30), to: at(60), stores: []string{"sip_dialogs", "sip_messages"}, ports: []string{"span0"},
			warn: []string{"evicted 90 of 100 dialogs seen (90 %)", "from 2026-01-05T09:00:30Z on only", "read the file again with a larger memory_limit_mib"}},
		{name: "evicted on a live box: the recorder has it", q: Query{Families: SIP},
			edit: func(in *Inputs) {
				in.Ports[0].Live = true
				in.Stores[0] = budget.Use{Store: budget.SIPDialogs, Items: 10, Evicted: 90, Oldest: ptr(at(30)), EvictedTo: at(29)}
			},
			from: at(30), to: at(60), stores: []string{"sip_dialogs", "sip_messages"}, ports: []string{"span0"},
			warn: []string{"search the recorder with find_in_captures", "memory_limit_mib"}},
		{name: "evicted before a window that starts after it: whole", q: Query{Families: SIP, Since: at(40)},
			edit: func(in *Inputs) {
				in.Stores[0] = budget.Use{Store: budget.SIPDialogs, Items: 10, Evicted: 90, Oldest: ptr(at(30)), EvictedTo: at(29)}
			},
			complete: true, from: at(40), to: at(60), stores: []string{"sip_dialogs", "sip_messages"}, ports: []string{"span0"}},
		{name: "evicted inside the window asked for", q: Query{Families: SIP, Since: at(10), Until: at(50)},
			edit: func(in *Inputs) {
				in.Stores[0] = budget.Use{Store: budget.SIPDialogs, Items: 10, Evicted: 90, Oldest: ptr(at(30)), EvictedTo: at(29)}
			},
			from: at(30), to: at(50), stores: []string{"sip_dialogs", "sip_messages"}, ports: []string{"span0"}, warn: []string{"evicted 90"}},
		{name: "losses in the window count, losses before it do not", q: Query{Families: SIP, Since: at(30)},
			edit: func(in *Inputs) {
				in.Ports[0].Losses = []ports.Loss{{At: at(10), Cause: "kernel", N: 100}, {At: at(45), Cause: "kernel", N: 3}, {At: at(46), Cause: "handoff_full", N: 2}}
			},
			from: at(30), to: at(60), stores: []string{"sip_dialogs", "sip_messages"}, ports: []string{"span0"},
			warn: []string{"port span0 lost 5 frames in this answer's window (handoff_full 2, kernel 3)"}},
		{name: "losses before the window only: whole", q: Query{Families: SIP, Since: at(30)},
			edit:     func(in *Inputs) { in.Ports[0].Losses = []ports.Loss{{At: at(10), Cause: "kernel", N: 100}} },
			complete: true, from: at(30), to: at(60), stores: []string{"sip_dialogs", "sip_messages"}, ports: []string{"span0"}},
		{name: "a port gone is not whole", q: Query{Families: CAN},
			edit: func(in *Inputs) { in.Ports[1].State, in.Ports[1].StateSince = ports.StateGone, ptr(at(59)) },
			from: at(1), to: at(59), stores: []string{"can_frames"}, ports: []string{"can0"},
			warn: []string{"port can0 is gone since 2026-01-05T09:00:59Z", "Check the cable"}},
		{name: "a silent port is whole and says so", q: Query{Families: CAN},
			edit:     func(in *Inputs) { in.Ports[1].State = ports.StateSilent },
			complete: true, from: at(1), to: at(59), stores: []string{"can_frames"}, ports: []string{"can0"},
			warn: []string{"port can0 is silent"}},
		{name: "a file that stopped early is not whole", q: Query{Families: SIP},
			edit: func(in *Inputs) { in.Ports[0].State, in.Ports[0].StoppedEarly = ports.StateEnded, "format: bad block" },
			from: at(0), to: at(60), stores: []string{"sip_dialogs", "sip_messages"}, ports: []string{"span0"},
			warn: []string{"stopped before the end of its source (format: bad block)"}},
		{name: "traffic not analysed is not whole", q: Query{Families: SIP},
			edit: func(in *Inputs) {
				in.NotAnalysed = []Cause{{Family: SIP | Media, Name: "tunnel_not_decoded", Count: 140, What: "frames in a tunnel"},
					{Family: J1708, Port: "j1708", Name: "checksum", Count: 3}}
			},
			from: at(0), to: at(60), stores: []string{"sip_dialogs", "sip_messages"}, ports: []string{"span0"},
			warn: []string{"carried 140 frames in a tunnel (tunnel_not_decoded"}},
		{name: "one port asked for", q: Query{Families: CAN | SIP, Ports: []string{"can0"}}, complete: true, from: at(1), to: at(59),
			stores: []string{"can_frames"}, ports: []string{"can0"}},
		{name: "a suspension is reported, the window stays whole", q: Query{Families: Media},
			edit: func(in *Inputs) {
				in.Suspensions = []Cause{{Family: Media, Name: "rtp_timing_epochs", Count: 2, What: "RTP timing epochs restarted"}}
			},
			complete: true, from: at(0), to: at(60), ports: []string{"span0"}, warn: []string{"2 RTP timing epochs restarted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := box()
			if tc.edit != nil {
				tc.edit(&in)
			}
			r := Build(tc.q, in)
			if r.Complete != tc.complete {
				t.Errorf("complete = %v, want %v (warnings %q)", r.Complete, tc.complete, r.Warnings)
			}
			if !r.From.Equal(tc.from) || !r.To.Equal(tc.to) {
				t.Errorf("window %v..%v, want %v..%v", r.From, r.To, tc.from, tc.to)
			}
			var stores, ps []string
			for _, s := range r.Stores {
				stores = append(stores, s.Store)
				if s.Seen != s.Held+s.Evicted+s.Refused {
					t.Errorf("store %s: seen %d != held %d + evicted %d + refused %d", s.Store, s.Seen, s.Held, s.Evicted, s.Refused)
				}
			}
			for _, p := range r.Ports {
				ps = append(ps, p.Name)
			}
			if strings.Join(stores, ",") != strings.Join(tc.stores, ",") || strings.Join(ps, ",") != strings.Join(tc.ports, ",") {
				t.Errorf("read stores %v ports %v, want %v %v", stores, ps, tc.stores, tc.ports)
			}
			joined := strings.Join(r.Warnings, "\n")
			for _, w := range tc.warn {
				if !strings.Contains(joined, w) {
					t.Errorf("warnings do not say %q:\n%s", w, joined)
				}
			}
			if len(tc.warn) == 0 && len(r.Warnings) > 0 {
				t.Errorf("warnings on a whole answer: %q", r.Warnings)
			}
		})
	}
}
