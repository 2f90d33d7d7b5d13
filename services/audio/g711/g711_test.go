package g711

import "testing"

// Known values: the µ-law ones are G.711's own (0xFF is +0, 0x00 the
// largest negative, -32124 at the 16-bit scale, a set sign bit
// positive); the A-law ones follow from G.711's A-law table (0xD5 and
// 0x55 are the smallest steps, ±8; 0xAA and 0x2A the largest, ±32256).
// All of them agree with sox's `-e u-law` and `-e a-law` decoding.
func TestKnownValues(t *testing.T) {
	for _, c := range []struct {
		law  string
		in   byte
		want int16
	}{
		{"ulaw", 0xFF, 0}, {"ulaw", 0x7F, 0}, {"ulaw", 0x00, -32124}, {"ulaw", 0x80, 32124},
		{"ulaw", 0xFE, 8}, {"ulaw", 0x7E, -8}, {"ulaw", 0xEF, 132}, // 0xEF: segment 1, step 0: (0+132)<<1 - 132
		{"alaw", 0xD5, 8}, {"alaw", 0x55, -8}, {"alaw", 0xAA, 32256}, {"alaw", 0x2A, -32256},
		{"alaw", 0xD4, 24}, {"alaw", 0xC5, 264},
	} {
		got := Ulaw(c.in)
		if c.law == "alaw" {
			got = Alaw(c.in)
		}
		if got != c.want {
			t.Errorf("%s(%#02x) = %d, want %d", c.law, c.in, got, c.want)
		}
	}
}

// Both laws are odd around their two zeros and monotonic within each
// sign, which a wrong segment shift would break.
func TestMonotonic(t *testing.T) {
	for _, law := range []struct {
		name string
		f    func(byte) int16
		pos  func(step int) byte // the byte of the step-th positive level
	}{
		{"ulaw", Ulaw, func(s int) byte { return byte(0xFF - s) }},
		{"alaw", Alaw, func(s int) byte { return byte(s^0x55) | 0x80 }},
	} {
		prev := int32(-1)
		for s := range 128 {
			v := int32(law.f(law.pos(s)))
			if v <= prev {
				t.Fatalf("%s: level %d = %d, not above level %d = %d", law.name, s, v, s-1, prev)
			}
			if neg := int32(law.f(law.pos(s) &^ 0x80)); neg != -v {
				t.Fatalf("%s: level %d: %d and %d are not opposite", law.name, s, v, neg)
			}
			prev = v
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x00, 0xFF, 0x55, 0xD5})
	f.Fuzz(func(t *testing.T, b []byte) {
		if n := len(DecodeAlaw(nil, b)); n != len(b) {
			t.Fatalf("a-law: %d samples from %d bytes", n, len(b))
		}
		if n := len(DecodeUlaw(nil, b)); n != len(b) {
			t.Fatalf("µ-law: %d samples from %d bytes", n, len(b))
		}
	})
}
