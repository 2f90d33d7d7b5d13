package rtp

import "testing"

func TestEstimateMOS(t *testing.T) {
	tests := []struct {
		name     string
		codec    string
		loss     float64
		min, max float64
		grounded bool
	}{
		{name: "clean G.711", codec: "PCMU", min: 4.3, max: 4.45, grounded: true},
		{name: "G.711 5% loss", codec: "PCMA", loss: 5, min: 3.4, max: 4.0, grounded: true},
		{name: "G.729 clean", codec: "G729", min: 3.9, max: 4.15, grounded: true},
		{name: "opus", codec: "opus", min: 4.3, max: 4.45, grounded: true},
		{name: "G.722 not grounded", codec: "G722"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := EstimateMOS(tc.codec, tc.loss, 1, 20)
			if m.Grounded != tc.grounded {
				t.Fatalf("grounded = %v", m.Grounded)
			}
			if !tc.grounded {
				if m.Value != nil || m.Reason != "not_grounded" {
					t.Errorf("ungrounded = %+v", m)
				}
				return
			}
			if *m.Value < tc.min || *m.Value > tc.max {
				t.Errorf("mos = %.2f, want %.2f..%.2f", *m.Value, tc.min, tc.max)
			}
		})
	}
	prev := 5.0
	for _, loss := range []float64{0, 1, 2, 5, 10, 20} {
		m := *EstimateMOS("PCMU", loss, 1, 20).Value
		if m >= prev {
			t.Errorf("mos %.2f at %v%% loss does not fall (previous %.2f)", m, loss, prev)
		}
		prev = m
	}
}
