package isotp

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestSegmentAndReassemble(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		frames int
	}{
		{name: "single", n: 3, frames: 1},
		{name: "single full", n: 7, frames: 1},
		{name: "first plus one", n: 8, frames: 2},
		{name: "VIN answer", n: 20, frames: 3},
		{name: "sequence wraps", n: 6 + 7*20, frames: 21},
		{name: "max", n: MaxPayload, frames: 1 + (MaxPayload-6+6)/7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			payload := make([]byte, tc.n)
			for i := range payload {
				payload[i] = byte(i)
			}
			frames, err := Segment(payload, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(frames) != tc.frames {
				t.Fatalf("%d frames, want %d", len(frames), tc.frames)
			}
			var r Reassembler
			var got []byte
			for i, f := range frames {
				if len(f) != FrameSize {
					t.Fatalf("frame %d has %d bytes, want padding to 8", i, len(f))
				}
				res, err := r.Feed(f)
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if res.NeedFlowControl != (i == 0 && tc.frames > 1) {
					t.Errorf("frame %d: NeedFlowControl = %v", i, res.NeedFlowControl)
				}
				if res.Payload != nil {
					got = res.Payload
				}
			}
			if !bytes.Equal(got, payload) {
				t.Errorf("reassembled %X, want %X", got, payload)
			}
		})
	}
}

func TestReassemblerRefusesBadSequence(t *testing.T) {
	var r Reassembler
	if _, err := r.Feed([]byte{0x21, 1, 2, 3, 4, 5, 6, 7}); !errors.Is(err, ErrSequence) {
		t.Errorf("CF without FF: err = %v", err)
	}
	r.Feed([]byte{0x10, 20, 0, 1, 2, 3, 4, 5})
	if _, err := r.Feed([]byte{0x22, 1, 2, 3, 4, 5, 6, 7}); !errors.Is(err, ErrSequence) {
		t.Errorf("CF 2 after FF: err = %v", err)
	}
}

func TestParseRejects(t *testing.T) {
	for _, b := range [][]byte{{}, {0x00}, {0x08, 1, 2, 3, 4, 5, 6, 7}, {0x05, 1}, {0x10, 5, 1, 2, 3, 4, 5, 6}, {0x34, 0, 0}, {0x40}} {
		if _, err := Parse(b); err == nil {
			t.Errorf("Parse(% X) accepted", b)
		}
	}
}

func TestFlowControlAndSTmin(t *testing.T) {
	if got := FlowControl(FlowContinue, 0, 0, true); !bytes.Equal(got, []byte{0x30, 0, 0, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA}) {
		t.Errorf("FlowControl = % X", got)
	}
	for b, want := range map[byte]int{0: 0, 0x7F: 127_000, 0xF1: 100, 0xF9: 900, 0x80: 127_000} {
		if got := STminMicros(b); got != want {
			t.Errorf("STminMicros(%02X) = %d, want %d", b, got, want)
		}
	}
}

func TestDecode(t *testing.T) {
	vin := []byte("1FUJGLDR9CLBP8834")
	for _, tc := range []struct {
		name      string
		req, resp []byte
		check     func(Response) string
	}{
		{"VIN", ReadDataByID(0xF190), append([]byte{0x62, 0xF1, 0x90}, vin...), func(r Response) string {
			return ok(r.Positive && r.DID == "0xF190" && r.DataText == string(vin), r)
		}},
		{"negative named", ReadDataByID(0xF190), []byte{0x7F, 0x22, 0x31}, func(r Response) string {
			return ok(!r.Positive && r.NRC == "0x31" && r.NRCName == "requestOutOfRange", r)
		}},
		{"pending", ReadDataByID(0xF190), []byte{0x7F, 0x22, 0x78}, func(r Response) string { return ok(r.Pending, r) }},
		{"session", SessionControl(3), []byte{0x50, 0x03, 0x00, 0x32, 0x01, 0xF4}, func(r Response) string {
			return ok(*r.Session == 3 && *r.P2Millis == 50 && *r.P2StarMs == 5000, r)
		}},
		{"dtcs", ReadDTC(DTCByMask, 0xFF), []byte{0x59, 0x02, 0xFF, 0x01, 0x23, 0x45, 0x09, 0xC0, 0x73, 0x00, 0x2F}, func(r Response) string {
			return ok(len(r.DTCs) == 2 && r.DTCs[1].Code == "C07300" && r.DTCs[1].Status == "2F", r)
		}},
		{"dtc count", ReadDTC(DTCCountByMask, 0x08), []byte{0x59, 0x01, 0xFF, 0x01, 0x00, 0x03}, func(r Response) string { return ok(*r.DTCCount == 3, r) }},
		{"tester present", TesterPresent(false), []byte{0x7E, 0x00}, func(r Response) string { return ok(r.Positive && r.Service == "TesterPresent", r) }},
		{"wrong service", ReadDataByID(0xF190), []byte{0x50, 0x01}, func(r Response) string { return ok(!r.Positive && r.Problem != "", r) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg := tc.check(Decode(tc.req, tc.resp)); msg != "" {
				t.Error(msg)
			}
		})
	}
}

func ok(cond bool, r Response) string {
	if cond {
		return ""
	}
	return fmt.Sprintf("unexpected decode %+v", r)
}

func FuzzReassemble(f *testing.F) {
	f.Add([]byte{0x10, 0x14, 0x62, 0xF1, 0x90, 0x31, 0x46, 0x55}, []byte{0x21, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{0x03, 0x7F, 0x22, 0x78}, []byte{0x30, 0, 0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var r Reassembler
		for _, fr := range [][]byte{a, b, a, b} {
			res, err := r.Feed(fr)
			if err == nil && res.Payload != nil && len(res.Payload) > MaxPayload {
				t.Fatalf("payload of %d bytes", len(res.Payload))
			}
			if res.Payload != nil {
				Decode([]byte{SIDReadDTC, DTCByMask, 0xFF}, res.Payload)
				Decode([]byte{SIDSessionControl, 1}, res.Payload)
				Decode([]byte{SIDReadDataByID, 0xF1, 0x90}, res.Payload)
			}
		}
	})
}

func FuzzSegment(f *testing.F) {
	f.Add([]byte("hello world, this is long"))
	f.Fuzz(func(t *testing.T, p []byte) {
		frames, err := Segment(p, false)
		if err != nil {
			return
		}
		var r Reassembler
		var got []byte
		for _, fr := range frames {
			res, err := r.Feed(fr)
			if err != nil {
				t.Fatal(err)
			}
			if res.Payload != nil {
				got = res.Payload
			}
		}
		if !bytes.Equal(got, p) {
			t.Fatalf("round trip %X != %X", got, p)
		}
	})
}
