package transmit

import (
	"context"
	"strings"
	"testing"
)

// TestHintsFitTheBoard: each blocker's hint names what works on the board
// the service runs on: the sim board's sim_ports, arm file, confirm file
// and no terminal path; a real board's [[port]] table, key switch,
// confirm_input and `fieldtap plan run`. A sim board's [[port]] port keeps
// the [[port]] hint.
func TestHintsFitTheBoard(t *testing.T) {
	sim := Hints{Sim: true, SimPorts: []string{"can0"}, ArmFile: "/tmp/demo/arm"}
	for _, c := range []struct {
		name  string
		hints Hints
		port  string
		want  map[string]string // gate: part of the hint
		never string
	}{
		{"sim board", sim, "can0", map[string]string{GatePortConfig: "[transmit] sim_ports", GateArm: "/tmp/demo/arm",
			GateButton: "[transmit] confirm_file", GateConfirmation: "only fieldtapd reaches the simulated bus"}, "[[port]]"},
		{"a [[port]] port on the sim board", sim, "can1", map[string]string{GatePortConfig: "[[port]] table"}, "sim_ports"},
		{"sim board without an arm file", Hints{Sim: true, SimPorts: []string{"can0"}}, "can0", map[string]string{GateArm: "set [transmit] arm_file"}, "key switch"},
		{"real board", Hints{}, "can0", map[string]string{GatePortConfig: "[[port]] table", GateArm: "key switch",
			GateButton: "confirm_input in its profile", GateConfirmation: "`fieldtap plan run`"}, "sim board"},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc, err := New(Options{Ports: []Port{{Name: c.port, Medium: MediumCAN}}, RequireButton: true, BundleLoaded: true, Hints: c.hints})
			if err != nil {
				t.Fatal(err)
			}
			who := Caller{Via: ViaMCP, Transport: "stdio"}
			sp := CANSend(c.port, rawFrames)
			p, err := svc.Plan(context.Background(), who, sp)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, b := range svc.Next(who, false, p).Blockers {
				got[b.Gate] = b.Hint
			}
			for gate, want := range c.want {
				if !strings.Contains(got[gate], want) {
					t.Errorf("gate %s hint %q, want %q", gate, got[gate], want)
				}
			}
			for gate, h := range got {
				if strings.Contains(h, c.never) {
					t.Errorf("gate %s hint %q names %q", gate, h, c.never)
				}
			}
		})
	}
}

// TestSimPressHint: on the sim board a plan that can be sent says how
// to press the confirm button there.
func TestSimPressHint(t *testing.T) {
	r := openRig(t)
	r.o.RequireButton, r.o.Button = true, newFakeButton()
	r.o.Hints = Hints{Sim: true, ConfirmFile: "/tmp/demo/confirm"}
	svc, err := New(r.o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Plan(context.Background(), r.caller, r.spec)
	if err != nil {
		t.Fatal(err)
	}
	if n := svc.Next(r.caller, true, p); !n.CanSend || !strings.Contains(n.Text, "fieldtap button press --file /tmp/demo/confirm") {
		t.Errorf("next = %+v", n)
	}
}
