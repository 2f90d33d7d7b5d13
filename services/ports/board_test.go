package ports

import (
	"reflect"
	"testing"
)

func TestRegistryBoard(t *testing.T) {
	span := BoardPart{Part: "span eth1", Outcome: OutcomeUp, Detail: "link up"}
	gadget := BoardPart{Part: "gadget", Outcome: OutcomeSkipped, Detail: "the board has no USB gadget"}
	fileArm := Arm{On: true, Input: ArmInputFile, Where: "/run/fieldtap/arm"}
	for _, tc := range []struct {
		name      string
		parts     []BoardPart
		arm       func() Arm
		wantParts []BoardPart
		wantArm   Arm
	}{
		{name: "nothing reported", wantParts: []BoardPart{}, wantArm: Arm{Input: ArmInputNone, Where: "no arm input registered"}},
		{name: "parts in order and an arm input", parts: []BoardPart{span, gadget}, arm: func() Arm { return fileArm },
			wantParts: []BoardPart{span, gadget}, wantArm: fileArm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Registry
			for _, p := range tc.parts {
				r.AddBoardPart(p)
			}
			if tc.arm != nil {
				r.SetArm(tc.arm)
			}
			if got := r.BoardParts(); !reflect.DeepEqual(got, tc.wantParts) {
				t.Errorf("BoardParts = %#v, want %#v", got, tc.wantParts)
			}
			if got := r.Arm(); got != tc.wantArm {
				t.Errorf("Arm = %+v, want %+v", got, tc.wantArm)
			}
		})
	}
}

func TestBoardPartsIsACopy(t *testing.T) {
	var r Registry
	r.AddBoardPart(BoardPart{Part: "gpio", Outcome: OutcomeUp})
	r.BoardParts()[0].Outcome = OutcomeFailed
	if got := r.BoardParts()[0].Outcome; got != OutcomeUp {
		t.Errorf("a caller changed the registry: outcome %q", got)
	}
}
