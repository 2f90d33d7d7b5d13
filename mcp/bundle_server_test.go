package mcp

import (
	"encoding/json"
	"reflect"
	"testing"

	"fieldtap/services/ports"
)

// fakeBoard is a port lister that also reports a board, as the daemon's
// ports.Registry does.
type fakeBoard struct {
	fakePorts
	parts []ports.BoardPart
	arm   ports.Arm
}

func (f fakeBoard) BoardParts() []ports.BoardPart { return f.parts }
func (f fakeBoard) Arm() ports.Arm                { return f.arm }

var _ BoardReporter = fakeBoard{}

func TestCaptureStatusReportsBoardAndArm(t *testing.T) {
	qemuParts := []ports.BoardPart{
		{Part: "span eth1", Outcome: ports.OutcomeUp, Detail: "link up, promiscuous, no addresses, IPv6 disabled"},
		{Part: "gadget", Outcome: ports.OutcomeFailed, Detail: "no UDC"},
		{Part: "gpio", Outcome: ports.OutcomeSkipped, Detail: "the board has no GPIO lines"},
	}
	gpioArm := ports.Arm{On: true, Input: ports.ArmInputGPIO, Where: "gpiochip0:3", Changes: 3}
	for _, tc := range []struct {
		name      string
		lister    PortLister
		wantParts []ports.BoardPart
		wantArm   ports.Arm
	}{
		{
			name:      "board with parts and a GPIO arm input",
			lister:    fakeBoard{fakePorts: fakePorts{{Name: "span0", Kind: "ethernet"}}, parts: qemuParts, arm: gpioArm},
			wantParts: qemuParts,
			wantArm:   gpioArm,
		},
		{
			name:      "sim board with its arm file off",
			lister:    fakeBoard{fakePorts: fakePorts{}, parts: []ports.BoardPart{}, arm: ports.Arm{Input: ports.ArmInputFile, Where: "/run/fieldtap/arm"}},
			wantParts: []ports.BoardPart{},
			wantArm:   ports.Arm{Input: ports.ArmInputFile, Where: "/run/fieldtap/arm"},
		},
		{
			name:      "a lister without a board",
			lister:    fakePorts{{Name: "file0", Kind: "unknown"}},
			wantParts: []ports.BoardPart{},
			wantArm:   noBoard,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := testDeps()
			d.Ports = tc.lister
			s, err := NewServer(d, Options{Bundles: []string{"server"}})
			if err != nil {
				t.Fatal(err)
			}
			r, env := call(t, s, toolCaptureStatus, map[string]any{})
			if r.IsError {
				t.Fatalf("capture_status failed: %v", env)
			}
			var got struct {
				Data struct {
					Ports       []ports.Status    `json:"ports"`
					Board       []ports.BoardPart `json:"board"`
					TransmitArm ports.Arm         `json:"transmit_arm"`
				} `json:"data"`
			}
			if err := json.Unmarshal(r.StructuredContent, &got); err != nil {
				t.Fatal(err)
			}
			if got.Data.Board == nil {
				t.Errorf("board is null, want a list (empty when the board reported nothing)")
			}
			if !reflect.DeepEqual(got.Data.Board, tc.wantParts) {
				t.Errorf("board = %+v, want %+v", got.Data.Board, tc.wantParts)
			}
			if got.Data.TransmitArm != tc.wantArm {
				t.Errorf("transmit_arm = %+v, want %+v", got.Data.TransmitArm, tc.wantArm)
			}
			if len(got.Data.Ports) != len(tc.lister.Snapshot()) {
				t.Errorf("%d ports, want %d", len(got.Data.Ports), len(tc.lister.Snapshot()))
			}
		})
	}
}
