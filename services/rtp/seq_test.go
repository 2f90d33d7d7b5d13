package rtp

import "testing"

func TestSeq(t *testing.T) {
	tests := []struct {
		name                                     string
		seqs                                     []uint16
		expected, lost, dups, outOfOrder, resets int64
	}{
		{name: "in order", seqs: []uint16{1, 2, 3, 4}, expected: 4},
		{name: "gap", seqs: []uint16{1, 2, 5, 6}, expected: 6, lost: 2},
		{name: "wrap", seqs: []uint16{65534, 65535, 0, 1}, expected: 4},
		{name: "duplicate end packets", seqs: []uint16{7, 8, 9, 9, 9}, expected: 3, dups: 2},
		{name: "late", seqs: []uint16{1, 3, 2, 4}, expected: 4, outOfOrder: 1},
		{name: "late duplicate", seqs: []uint16{1, 3, 2, 4, 2}, expected: 4, outOfOrder: 1, dups: 1},
		{name: "late before first", seqs: []uint16{5, 4, 6}, expected: 3, outOfOrder: 1},
		{name: "reset", seqs: []uint16{10, 11, 40000, 40001, 40002}, expected: 5, resets: 1},
		{name: "stray jump", seqs: []uint16{10, 11, 40000, 12}, expected: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s seqState
			for _, q := range tc.seqs {
				s.add(q)
			}
			got := []int64{s.expected(), s.lost(), int64(s.duplicates), int64(s.outOfOrder), int64(s.resets)}
			want := []int64{tc.expected, tc.lost, tc.dups, tc.outOfOrder, tc.resets}
			if got != nil && (got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] || got[4] != want[4]) {
				t.Errorf("expected/lost/dups/ooo/resets = %v, want %v", got, want)
			}
		})
	}
}
