package mcp

import (
	"context"
	"fmt"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/services/sip"
)

// TestCompletionsOfferWhatTheBoxHolds: completion/complete, asked by a
// go-sdk client over stdio and HTTP, offers the values the stores hold
// now, filtered by the typed prefix, and nothing for an argument it does
// not know.
func TestCompletionsOfferWhatTheBoxHolds(t *testing.T) {
	canPort := &sdk.CompleteReference{Type: "ref/resource", URI: "fieldtap://live/can/{port}"}
	dialog := &sdk.CompleteReference{Type: "ref/resource", URI: "fieldtap://live/dialogs/{call_id}"}
	tests := []struct {
		name, arg, value string
		ref              *sdk.CompleteReference
		known            map[string]string
		want             []string
	}{
		{name: "CAN ports only for live/can", ref: canPort, arg: "port", want: []string{"can0"}},
		{name: "every port elsewhere", ref: dialog, arg: "port", want: []string{"span0", "can0", "j1708"}},
		{name: "Call-IDs newest first", ref: dialog, arg: "call_id", want: []string{"call-4", "call-3", "call-2", "call-1", "call-0"}},
		{name: "Call-IDs by prefix", ref: dialog, arg: "call_id", value: "call-3", want: []string{"call-3"}},
		{name: "no such Call-ID", ref: dialog, arg: "call_id", value: "nope", want: []string{}},
		{name: "streams of a call", ref: dialog, arg: "stream_id", known: map[string]string{"call_id": "call-1"},
			want: []string{"192.0.2.2:5000>192.0.2.1:4000/0000000B", "192.0.2.1:4000>192.0.2.2:5000/0000000A"}},
		{name: "source addresses", ref: dialog, arg: "sa", want: []string{"0"}},
		{name: "SPNs", ref: dialog, arg: "spn", value: "1", want: []string{"110", "190", "1483"}},
		{name: "MIDs", ref: dialog, arg: "mid", want: []string{"128"}},
		{name: "PIDs of a MID", ref: dialog, arg: "pid", known: map[string]string{"mid": "128"}, want: []string{"84", "194"}},
		{name: "PIDs of a silent MID", ref: dialog, arg: "pid", known: map[string]string{"mid": "130"}, want: []string{}},
		{name: "tools", ref: dialog, arg: "tool", value: "j1", want: []string{"j1587_summary", "j1939_faults"}},
		{name: "dimensions", ref: dialog, arg: "dimension", value: "s", want: []string{"state", "src_ip"}},
		{name: "filter field, last word", ref: dialog, arg: "filter", value: "state == failed and final_", want: []string{"state == failed and final_code"}},
		{name: "unknown argument", ref: dialog, arg: "colour", want: []string{}},
		{name: "plans without a transmit service", ref: dialog, arg: "plan_id", want: []string{}},
	}
	for _, cn := range connectors {
		t.Run(cn.name, func(t *testing.T) {
			b := newLiveBox(t)
			b.feed(t, dm1)
			s, _ := cn.connect(t, b, sdk.NewClient(&sdk.Implementation{Name: "complete-test", Version: "1"}, nil))
			for _, tc := range tests {
				res, err := s.Complete(context.Background(), &sdk.CompleteParams{Ref: tc.ref, Argument: sdk.CompleteParamsArgument{Name: tc.arg, Value: tc.value}, Context: &sdk.CompleteContext{Arguments: tc.known}})
				if err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				if !slices.Equal(res.Completion.Values, tc.want) {
					t.Errorf("%s: %q, want %q", tc.name, res.Completion.Values, tc.want)
				}
			}
		})
	}
}

// TestCompletionsStopAtOneHundred: more matches than the specification
// allows are cut at 100, with the total and hasMore.
func TestCompletionsStopAtOneHundred(t *testing.T) {
	b := newLiveBox(t)
	b.d.SIP, _ = sip.New(sip.Limits{})
	for i := range 150 {
		addSIP(t, b.d.SIP, i, fmt.Sprintf("INVITE sip:2002@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:1001@h>;tag=1\r\nTo: <sip:2002@h>\r\nCall-ID: many-%03d\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n", i, i))
	}
	s, _ := connectors[0].connect(t, b, sdk.NewClient(&sdk.Implementation{Name: "complete-test", Version: "1"}, nil))
	res, err := s.Complete(context.Background(), &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/resource", URI: "fieldtap://live/dialogs/{call_id}"}, Argument: sdk.CompleteParamsArgument{Name: "call_id", Value: "many-"}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Completion; len(c.Values) != maxCompletions || c.Total != 150 || !c.HasMore || c.Values[0] != "many-149" {
		t.Errorf("%d values (first %q), total %d, hasMore %v", len(c.Values), c.Values[0], c.Total, c.HasMore)
	}
}

// TestPGNCompletionsOfferEveryPGNHeard: completion of pgn offers every
// PGN the J1939 store counted (not only the busiest ten), ascending,
// then the catalogue's PGNs the bus did not carry, filtered by the
// prefix, at most 100, read afresh on every request.
func TestPGNCompletionsOfferEveryPGNHeard(t *testing.T) {
	b := newLiveBox(t) // EEC1: PGN 61444
	b.feed(t, dm1)     // PGN 65226
	for i := range 150 {
		// Proprietary B PGNs 65280..65429, one frame each from SA 0x21.
		b.feed(t, j1939Frame{id: 0x18000021 | uint32(0xFF00+i)<<8, data: []byte{1, 2, 3, 4, 5, 6, 7, 8}})
	}
	s, _ := connectors[0].connect(t, b, sdk.NewClient(&sdk.Implementation{Name: "complete-test", Version: "1"}, nil))
	complete := func(prefix string) *sdk.CompleteResult {
		t.Helper()
		res, err := s.Complete(context.Background(), &sdk.CompleteParams{
			Ref:      &sdk.CompleteReference{Type: "ref/resource", URI: "fieldtap://live/dialogs/{call_id}"},
			Argument: sdk.CompleteParamsArgument{Name: "pgn", Value: prefix}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	heard := func(from, to int) []string {
		var out []string
		for p := from; p <= to; p++ {
			out = append(out, fmt.Sprint(p))
		}
		return out
	}
	// The built-in catalogue's PGNs from 652…, none of them on this bus.
	catalogue652 := []string{"65248", "65253", "65262", "65263", "65265", "65266", "65269", "65270", "65271", "65276"}
	tests := []struct {
		prefix string
		want   []string
	}{
		{prefix: "652", want: slices.Concat([]string{"65226"}, heard(65280, 65299), catalogue652)},
		{prefix: "614", want: []string{"61444", "61443", "61445"}},
		{prefix: "9", want: []string{}},
	}
	for _, tc := range tests {
		if got := complete(tc.prefix).Completion; !slices.Equal(got.Values, tc.want) || got.Total != len(tc.want) {
			t.Errorf("prefix %q: %q (total %d), want %q", tc.prefix, got.Values, got.Total, tc.want)
		}
	}
	// 152 PGNs heard and 12 more in the catalogue: the first 100 heard,
	// the rest counted.
	all := complete("").Completion
	if want := slices.Concat([]string{"61444", "65226"}, heard(65280, 65377)); !slices.Equal(all.Values, want) || all.Total != 164 || !all.HasMore {
		t.Errorf("no prefix: %d values %q…, total %d, hasMore %v", len(all.Values), all.Values[:min(5, len(all.Values))], all.Total, all.HasMore)
	}
	// Never cached: a PGN heard after a completion is offered by the next.
	if got := complete("650").Completion.Values; len(got) != 0 {
		t.Fatalf("prefix 650 before PGN 65024 was heard: %q", got)
	}
	b.feed(t, j1939Frame{id: 0x18FE0021, data: []byte{1, 2, 3, 4, 5, 6, 7, 8}})
	if got := complete("650").Completion.Values; !slices.Equal(got, []string{"65024"}) {
		t.Errorf("prefix 650 after PGN 65024 was heard: %q", got)
	}
}
