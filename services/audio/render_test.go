package audio

import (
	"encoding/binary"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)

// pkt builds an RTP packet of pt at seq and ts with n payload bytes of b,
// captured at ms milliseconds.
func pkt(pt uint8, seq uint16, ts uint32, ms int, n int, b byte) Packet {
	d := make([]byte, 12+n)
	d[0], d[1] = 0x80, pt
	binary.BigEndian.PutUint16(d[2:], seq)
	binary.BigEndian.PutUint32(d[4:], ts)
	binary.BigEndian.PutUint32(d[8:], 0x1234)
	for i := range n {
		d[12+i] = b
	}
	return Packet{Time: t0.Add(time.Duration(ms) * time.Millisecond), Data: d}
}

func TestRenderPlacesByTimestamp(t *testing.T) {
	// 20 ms A-law packets: 0, 1, [2 lost], 3, then a 1 s pause with no
	// sequence gap, comfort noise, then audio again; a duplicate, a
	// reordered pair and a DTMF event packet on PT 101.
	ps := []Packet{
		pkt(8, 100, 1000, 0, 160, 0xD5),
		pkt(8, 101, 1160, 20, 160, 0xD5),
		pkt(8, 103, 1480, 60, 160, 0xD5),
		pkt(8, 103, 1480, 61, 160, 0xD5), // duplicate
		pkt(8, 105, 1640+8000, 1080, 160, 0xD5),
		pkt(8, 104, 1640, 80, 160, 0xD5), // reordered in capture
		pkt(13, 106, 1800+8000, 1100, 1, 0x40),
		pkt(101, 107, 1800+8000, 1110, 4, 0),
		pkt(8, 108, 1800+16000, 2100, 160, 0xD5),
	}
	tr, err := Render(ps, Options{Codecs: map[uint8]string{101: "telephone-event"}, MaxDuration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	wantSamples := 1800 + 16000 + 160 - 1000
	if len(tr.Samples) != wantSamples || tr.Rate != 8000 || tr.Codec != "PCMA" {
		t.Fatalf("%d samples at %d (%s), want %d at 8000 (PCMA)", len(tr.Samples), tr.Rate, tr.Codec, wantSamples)
	}
	if tr.Lost != 1 || tr.Duplicates != 1 || tr.Events != 1 || tr.Packets != 7 {
		t.Errorf("lost %d duplicates %d events %d packets %d, want 1 1 1 7", tr.Lost, tr.Duplicates, tr.Events, tr.Packets)
	}
	want := []Gap{
		{Offset: 320 * time.Second / 8000, Duration: 20 * time.Millisecond, Lost: 1, Cause: CauseLoss},
		{Offset: 800 * time.Second / 8000, Duration: 7840 * time.Second / 8000, Cause: CauseNoPackets},
		{Offset: 8800 * time.Second / 8000, Duration: time.Second, Cause: CauseComfortNoise},
	}
	if len(tr.Gaps) != len(want) {
		t.Fatalf("gaps %+v, want %+v", tr.Gaps, want)
	}
	for i, g := range want {
		got := tr.Gaps[i]
		if got.Offset != g.Offset || got.Duration != g.Duration || got.Lost != g.Lost || got.Cause != g.Cause || !got.At.Equal(t0.Add(g.Offset)) {
			t.Errorf("gap %d: %+v, want %+v", i, got, g)
		}
	}
	if tr.Samples[0] != 8 || tr.Samples[400] != 0 {
		t.Errorf("samples %d (audio) and %d (lost), want 8 and 0", tr.Samples[0], tr.Samples[400])
	}
}

func TestRenderG722AndBounds(t *testing.T) {
	ps := []Packet{pkt(9, 1, 0, 0, 160, 0xFF), pkt(9, 2, 160, 20, 160, 0xFF), pkt(9, 3, 320, 40, 160, 0xFF)}
	tr, err := Render(ps, Options{MaxDuration: 500 * time.Second / 16000})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Rate != 16000 || len(tr.Samples) != 500 || !tr.Cut || tr.CutAt != 500*time.Second/16000 {
		t.Fatalf("rate %d, %d samples, cut %v at %v; want 16000, 500, cut at 31.25ms", tr.Rate, len(tr.Samples), tr.Cut, tr.CutAt)
	}
}

func TestRenderNamesUnsupportedCodec(t *testing.T) {
	_, err := Render([]Packet{pkt(18, 1, 0, 0, 20, 0)}, Options{Codecs: map[uint8]string{18: "G729"}, MaxDuration: time.Second})
	u, ok := err.(*Unsupported)
	if !ok || len(u.Codecs) != 1 || u.Codecs[0] != "G729" {
		t.Fatalf("err %v, want Unsupported naming G729", err)
	}
}

func TestRenderTimestampRestart(t *testing.T) {
	ps := []Packet{pkt(0, 1, 5000, 0, 160, 0xFF), pkt(0, 2, 900_000_000, 20, 160, 0xFF)}
	tr, _ := Render(ps, Options{MaxDuration: time.Hour})
	if tr.Jumps != 1 || len(tr.Samples) != 320 {
		t.Fatalf("jumps %d, %d samples; want 1 jump placed by capture time, 320 samples", tr.Jumps, len(tr.Samples))
	}
}

func TestMix(t *testing.T) {
	a := &Track{Rate: 8000, Start: t0, Samples: []int16{1, 2, 3, 4}}
	b := &Track{Rate: 16000, Start: t0.Add(250 * time.Microsecond), Samples: []int16{10, 20, 30, 40}}
	st, start, cut := Mix([]*Track{a}, []*Track{b}, 8000, 100)
	want := []int16{1, 0, 2, 0, 3, 10, 4, 30}
	if !start.Equal(t0) || cut || len(st) != len(want) {
		t.Fatalf("mix %v from %v cut %v, want %v", st, start, cut, want)
	}
	for i := range want {
		if st[i] != want[i] {
			t.Fatalf("mix %v, want %v", st, want)
		}
	}
}

func FuzzRender(f *testing.F) {
	f.Add(pkt(8, 1, 0, 0, 160, 0xD5).Data, pkt(9, 3, 320, 40, 10, 0x12).Data, uint16(20))
	f.Add(pkt(13, 1, 0, 0, 1, 0).Data, pkt(0, 65535, 4_000_000_000, 40, 10, 0x12).Data, uint16(0))
	f.Fuzz(func(t *testing.T, a, b []byte, ms uint16) {
		ps := []Packet{{Time: t0, Data: a}, {Time: t0.Add(time.Duration(ms) * time.Millisecond), Data: b}, {Time: t0, Data: a}}
		tr, _ := Render(ps, Options{Codecs: map[uint8]string{101: "telephone-event", 96: "G722"}, MaxDuration: 4 * time.Second})
		if len(tr.Samples) > 4*tr.Rate {
			t.Fatalf("%d samples past the bound", len(tr.Samples))
		}
	})
}
