package j1708

import (
	"bytes"
	"encoding/hex"
	"fieldtap/drivers/wire"
	"testing"
	"time"
)

// byteTime9600 is one 10-bit character at 9600 baud.
const byteTime9600 = time.Second * 10 / 9600

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type chunk struct {
	hex   string
	after time.Duration // idle line before the chunk's first byte
}

func TestFramer(t *testing.T) {
	const (
		m16 = "80540056005B075C05BB0000BEF70A99"
		m10 = "80460047005300590047"
		m4  = "80C200BE"
	)
	tests := []struct {
		name   string
		chunks []chunk
		want   []string
		stats  FramerStats
	}{
		{name: "messages with gaps", chunks: []chunk{{hex: m16}, {hex: m10, after: 5 * time.Millisecond}, {hex: m4, after: 5 * time.Millisecond}},
			want: []string{m16, m10, m4}, stats: FramerStats{Messages: 3, Runs: 3}},
		{name: "one message in pieces without gaps", chunks: []chunk{{hex: m16[:10]}, {hex: m16[10:20]}, {hex: m16[20:]}},
			want: []string{m16}, stats: FramerStats{Messages: 1, Runs: 1}},
		{name: "glued messages split by checksum", chunks: []chunk{{hex: m16 + m10}},
			want: []string{m16, m10}, stats: FramerStats{Messages: 2, Runs: 1, Resyncs: 1}},
		{name: "noise byte before a message", chunks: []chunk{{hex: "13" + m16}},
			want: []string{m16}, stats: FramerStats{Messages: 1, Runs: 1, Resyncs: 1, Noise: 1, Discarded: 1}},
		{name: "noise between glued messages", chunks: []chunk{{hex: m10 + "0102" + m16}},
			want: []string{m10, m16}, stats: FramerStats{Messages: 2, Runs: 1, Resyncs: 1, Noise: 1, Discarded: 2}},
		{name: "lone noise byte", chunks: []chunk{{hex: "55"}, {hex: m4, after: 5 * time.Millisecond}},
			want: []string{m4}, stats: FramerStats{Messages: 1, Runs: 2, Noise: 1, Discarded: 1}},
		{name: "garbled message dropped whole", chunks: []chunk{{hex: "80540056005B075C05BB0000BEF70A98"}},
			stats: FramerStats{Runs: 1, ChecksumFailures: 1, Discarded: 16}},
		// The price of not inventing messages inside garbage: a good message
		// glued to a garbled one is lost with it, and counted.
		{name: "garbled message glued to a good one", chunks: []chunk{{hex: "80540056005B075C05BB0000BEF70A98" + m10}},
			stats: FramerStats{Runs: 1, ChecksumFailures: 1, Discarded: 26}},
		// Glued messages of 21 bytes or fewer in all are indistinguishable
		// from one message by checksum and stay one; longer runs split into
		// as many messages as cover them.
		{name: "glued short messages split", chunks: []chunk{{hex: m4 + m4 + m4 + m4 + m4 + m4}},
			want: []string{m4, m4, m4, m4, m4, m4}, stats: FramerStats{Messages: 6, Runs: 1, Resyncs: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFramer(time.Millisecond, byteTime9600)
			var got []string
			emit := func(m []byte, _ time.Time) { got = append(got, hex.EncodeToString(m)) }
			at := time.Unix(1000, 0)
			for _, c := range tc.chunks {
				b := unhex(t, c.hex)
				at = at.Add(c.after + time.Duration(len(b))*byteTime9600)
				f.Feed(b, at, emit)
			}
			f.Idle(at.Add(2*time.Millisecond), emit)
			if f.Buffered() != 0 {
				t.Fatalf("%d bytes still buffered after an idle gap", f.Buffered())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("messages = %v, want %v", got, tc.want)
			}
			for i := range got {
				if !bytes.EqualFold([]byte(got[i]), []byte(tc.want[i])) {
					t.Errorf("message %d = %s, want %s", i, got[i], tc.want[i])
				}
			}
			if f.Stats != tc.stats {
				t.Errorf("stats = %+v, want %+v", f.Stats, tc.stats)
			}
		})
	}
}

func TestFramerOverlongRun(t *testing.T) {
	f := NewFramer(time.Millisecond, byteTime9600)
	m := unhex(t, "80C200BE")
	var n int
	at := time.Unix(1000, 0)
	// 60 four-byte messages with no gap at all: 240 bytes > maxRun.
	for range 60 {
		f.Feed(m, at, func([]byte, time.Time) { n++ })
	}
	f.Flush(func([]byte, time.Time) { n++ })
	if f.Stats.Overlong != 1 || n != 60 {
		t.Errorf("overlong = %d, messages = %d; want 1 and 60", f.Stats.Overlong, n)
	}
}

// TestFramerOverlongFirstChunk: a read that returns more than maxRun
// bytes at once (a port opened on a line already talking) frames the run
// at the times its bytes arrived, not at the zero time of an empty
// framer.
func TestFramerOverlongFirstChunk(t *testing.T) {
	f := NewFramer(time.Millisecond, byteTime9600)
	m := unhex(t, "80C200BE")
	var chunk []byte
	for range 60 {
		chunk = append(chunk, m...)
	}
	at := time.Unix(1000, 0)
	var times []time.Time
	emit := func(_ []byte, end time.Time) { times = append(times, end) }
	f.Feed(chunk, at, emit)
	f.Flush(emit)
	if len(times) != 60 {
		t.Fatalf("%d messages, want 60", len(times))
	}
	first := at.Add(-time.Duration(len(chunk)-len(m)) * byteTime9600)
	if !times[0].Equal(first) || !times[59].Equal(at) {
		t.Errorf("first message ends %v, last %v; want %v and %v", times[0], times[59], first, at)
	}
	for i := 1; i < len(times); i++ {
		if times[i].Before(times[i-1]) {
			t.Fatalf("message %d ends %v, before message %d at %v", i, times[i], i-1, times[i-1])
		}
	}
}

func TestFramerDoesNotAllocate(t *testing.T) {
	f := NewFramer(time.Millisecond, byteTime9600)
	glued := unhex(t, "1380540056005B075C05BB0000BEF70A9980460047005300590047")
	at := time.Unix(1000, 0)
	emit := func([]byte, time.Time) {}
	if n := testing.AllocsPerRun(100, func() {
		at = at.Add(50 * time.Millisecond)
		f.Feed(glued, at, emit)
		f.Flush(emit)
	}); n != 0 {
		t.Errorf("allocs = %v, want 0", n)
	}
}

// FuzzFramer checks the framer's invariants on any byte stream cut into
// any chunks: every message is valid, and every byte is either in a
// message or counted as discarded.
func FuzzFramer(f *testing.F) {
	f.Add(unhex(f, "80540056005B075C05BB0000BEF70A9980460047005300590047"), uint8(7))
	f.Add(unhex(f, "13808880548080548E8080C200BE"), uint8(3))
	f.Add(bytes.Repeat([]byte{0x80, 0xC2, 0x00, 0xBE}, 50), uint8(0))
	f.Fuzz(func(t *testing.T, stream []byte, cut uint8) {
		fr := NewFramer(time.Millisecond, byteTime9600)
		var emitted uint64
		emit := func(m []byte, _ time.Time) {
			if len(m) < wire.MinJ1708Message || len(m) > wire.MaxJ1708Message || !Checksum(m) {
				t.Fatalf("emitted invalid message % x", m)
			}
			emitted += uint64(len(m))
		}
		at := time.Unix(1000, 0)
		step := int(cut%23) + 1
		for i := 0; i < len(stream); i += step {
			b := stream[i:min(i+step, len(stream))]
			gap := time.Duration(cut%3) * time.Millisecond // 0, 1 or 2 ms of idle
			at = at.Add(gap + time.Duration(len(b))*byteTime9600)
			fr.Feed(b, at, emit)
		}
		fr.Flush(emit)
		if emitted+fr.Stats.Discarded != uint64(len(stream)) {
			t.Fatalf("bytes in messages %d + discarded %d != fed %d", emitted, fr.Stats.Discarded, len(stream))
		}
	})
}

func BenchmarkFramer(b *testing.B) {
	msgs := [][]byte{
		unhex(b, "80540056005B075C05BB0000BEF70A99"),
		unhex(b, "80020028FF55007900B72600B80000F4"),
		unhex(b, "80460047005300590047"),
		unhex(b, "80C200BE"),
	}
	f := NewFramer(time.Millisecond, byteTime9600)
	at := time.Unix(1000, 0)
	var out int
	emit := func(m []byte, _ time.Time) { out++ }
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		m := msgs[n%len(msgs)]
		n++
		at = at.Add(time.Duration(len(m))*byteTime9600 + 2*time.Millisecond)
		f.Feed(m, at, emit)
	}
	f.Flush(emit)
	if out != n {
		b.Fatalf("framed %d of %d", out, n)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}
