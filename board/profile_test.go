package board

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ name, toml, want string }{
		{"unknown key", "name = \"x\"\nled = 1\n", "unknown key led"},
		{"wrong name", "name = \"y\"\n", `name "y"`},
		{"bad line", "name = \"x\"\n[gpio]\narm_input = \"gpiochip0\"\n", "CHIP:OFFSET"},
		{"bad pull", "name = \"x\"\n[gpio]\narm_pull = \"sideways\"\n", "arm_pull"},
		{"bad confirm line", "name = \"x\"\n[gpio]\nconfirm_input = \"3\"\n", "confirm_input"},
		{"bad confirm pull", "name = \"x\"\n[gpio]\nconfirm_pull = \"sideways\"\n", "confirm_pull"},
		{"button on the key's line", "name = \"x\"\n[gpio]\narm_input = \"c:3\"\nconfirm_input = \"c:3\"\n", "also the arm input"},
		{"gadget", "name = \"x\"\n[gadget]\nfunction = \"rndis\"\n", "want ncm or ecm"},
		{"gadget address", "name = \"x\"\n[gadget]\nfunction = \"ncm\"\ninterface = \"usb0\"\n", "needs interface and address"},
		{"port key", "name = \"x\"\n[[port]]\nname = \"a\"\nspeed = 3\n", "unknown key port.speed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x", []byte(tc.toml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := Load("toaster"); err == nil || !strings.Contains(err.Error(), "qemu-virt") {
		t.Errorf("unknown profile: %v, want the list of profiles", err)
	}
}

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Line
		ok   bool
	}{
		{in: "gpiochip0:3", want: Line{Chip: "gpiochip0", Offset: 3}, ok: true},
		{in: "pinctrl-bcm2711:27", want: Line{Chip: "pinctrl-bcm2711", Offset: 27}, ok: true},
		{in: "a:b:5", want: Line{Chip: "a:b", Offset: 5}, ok: true},
		{in: "gpiochip0"},
		{in: ":3"},
		{in: "gpiochip0:-1"},
		{in: "gpiochip0:512"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseLine(tc.in)
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("ParseLine(%q) = %v, %v", tc.in, got, err)
			}
		})
	}
}

func TestMergePorts(t *testing.T) {
	prof := []Port{{Name: "can0", Driver: "socketcan", Device: "can0"}, {Name: "j1708", Driver: "j1708", Device: "/dev/ttyS0"}}
	conf := []Port{{Name: "j1708", Driver: "j1708", Device: "/dev/ttyUSB0"}, {Name: "extra", Driver: "j1708", Device: "/dev/ttyS9"}}
	got := MergePorts(prof, conf)
	want := []Port{prof[0], conf[0], conf[1]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MergePorts = %+v, want %+v", got, want)
	}
	open, skipped := SplitCompiled(got, []string{"j1708"})
	if len(open) != 2 || len(skipped) != 1 || skipped[0].Name != "can0" {
		t.Errorf("SplitCompiled: open %v skipped %v", open, skipped)
	}
}

// TestEveryProfileStatesAMemoryBudget: the budget every store's bound is
// derived from must come from the board, not from a guess.
func TestEveryProfileStatesAMemoryBudget(t *testing.T) {
	for _, name := range Names() {
		p, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.MemoryBudgetMiB < 32 {
			t.Errorf("profile %s: memory_budget_mib %d: state the board's share for fieldtapd (at least 32)", name, p.MemoryBudgetMiB)
		}
	}
}
