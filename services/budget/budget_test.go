package budget

import (
	"errors"
	"strings"
	"testing"
)

func TestDivide(t *testing.T) {
	const mib = 1 << 20
	budget := int64(128 * mib)
	left := int64(float64(budget)*StoreFraction) - 16*mib // the pool after the kernel ring
	for _, tc := range []struct {
		name   string
		budget int64
		reqs   []Request
		want   map[string]int64 // store[port] → bytes
		err    string           // a substring of the refusal
	}{
		{
			name:   "weights split the pool after fixed costs",
			budget: 128 * mib,
			reqs: []Request{
				{Store: KernelRing, Port: "span0", Fixed: 16 * mib, Why: "afpacket ring"},
				{Store: Frames, Port: "span0", Weight: 1},
				{Store: SIPMessages, Weight: 3},
			},
			want: map[string]int64{"kernel_ring[span0]": 16 * mib, "frames[span0]": left / 4, "sip_messages": left * 3 / 4},
		},
		{
			name:   "fixed bounds past the pool are refused with every figure",
			budget: 64 * mib,
			reqs: []Request{
				{Store: Frames, Port: "span0", Fixed: 24 * mib, Why: "store.bytes_per_port"},
				{Store: Frames, Port: "span1", Fixed: 24 * mib, Why: "store.bytes_per_port"},
				{Store: SIPMessages, Weight: 1},
			},
			err: "frames[span0] 24.0 MiB (store.bytes_per_port) + frames[span1] 24.0 MiB (store.bytes_per_port) sum to 48.0 MiB",
		},
		{
			name:   "a budget the runtime alone fills is refused",
			budget: 16 * mib,
			reqs:   []Request{{Store: SIPMessages, Weight: 1}},
			err:    "below the 32.0 MiB",
		},
		{
			name:   "a request with neither size nor weight is a bug",
			budget: 128 * mib,
			reqs:   []Request{{Store: SIPMessages}},
			err:    "want a fixed size or a weight",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Divide(tc.budget, "test", tc.reqs)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range p.Shares {
				if got, want := s.Bytes, tc.want[name(s.Store, s.Port)]; got != want {
					t.Errorf("%s = %d, want %d", name(s.Store, s.Port), got, want)
				}
			}
			if p.Sum() > p.Pool {
				t.Errorf("shares sum to %d, past the pool %d", p.Sum(), p.Pool)
			}
		})
	}
}

func TestOverBudgetIsErrOverBudget(t *testing.T) {
	_, err := Divide(64<<20, "memory_limit_mib", []Request{{Store: Frames, Port: "p", Fixed: 1 << 30, Why: "x"}})
	if !errors.Is(err, ErrOverBudget) {
		t.Errorf("err = %v, want ErrOverBudget", err)
	}
	if !strings.Contains(err.Error(), "64.0 MiB budget (memory_limit_mib)") {
		t.Errorf("err = %v: it must name the budget and where it came from", err)
	}
}

func TestFraction(t *testing.T) {
	p := Plan{Budget: 3 << 20}
	if got := p.Fraction(1 << 20); got != 0.333 {
		t.Errorf("Fraction = %v, want 0.333", got)
	}
}
