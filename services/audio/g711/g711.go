// Package g711 decodes ITU-T G.711 companded samples (µ-law, A-law) to
// 16-bit linear PCM. Both laws expand each byte on its own, so a decoder
// is a 256-entry table built once from the law's segment formula.
package g711

// ulawBias is the bias µ-law adds before companding: the G.711 encoder
// adds 33 to the 14-bit magnitude, and 0x84 is 33 at the 16-bit scale.
const ulawBias = 0x84

var ulaw, alaw [256]int16

func init() {
	for i := range 256 {
		ulaw[i] = expandUlaw(byte(i))
		alaw[i] = expandAlaw(byte(i))
	}
}

// expandUlaw inverts µ-law: the byte is sent inverted; three bits pick
// the segment (a doubling of the step), four the step within it.
func expandUlaw(u byte) int16 {
	u = ^u
	seg := (u >> 4) & 7
	mag := (int32(u&0x0F)<<3 + ulawBias) << seg
	if u&0x80 != 0 {
		return int16(ulawBias - mag)
	}
	return int16(mag - ulawBias)
}

// expandAlaw inverts A-law: even bits are sent inverted (XOR 0x55);
// segment 0 is linear, each further segment doubles the step. A set
// sign bit means positive.
func expandAlaw(a byte) int16 {
	a ^= 0x55
	seg := (a >> 4) & 7
	mag := int32(a&0x0F)<<4 + 8 // the step's midpoint
	if seg > 0 {
		mag = (mag + 0x100) << (seg - 1)
	}
	if a&0x80 != 0 {
		return int16(mag)
	}
	return int16(-mag)
}

// Ulaw returns the linear value of one µ-law byte.
func Ulaw(b byte) int16 { return ulaw[b] }

// Alaw returns the linear value of one A-law byte.
func Alaw(b byte) int16 { return alaw[b] }

// DecodeUlaw appends the samples of µ-law bytes to dst.
func DecodeUlaw(dst []int16, src []byte) []int16 {
	for _, b := range src {
		dst = append(dst, ulaw[b])
	}
	return dst
}

// DecodeAlaw appends the samples of A-law bytes to dst.
func DecodeAlaw(dst []int16, src []byte) []int16 {
	for _, b := range src {
		dst = append(dst, alaw[b])
	}
	return dst
}
