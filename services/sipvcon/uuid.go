package sipvcon

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// UUIDv8 is the vCon draft's uuid (§ uuid): laid out as a version 7 UUID
// (RFC 9562 §5.7: 48 bits of Unix milliseconds, 12 bits rand_a), except
// that rand_b is the high 62 bits of the SHA-1 of fqhn, with the version
// and variant fields of a version 8 UUID (RFC 9562 §5.8). randA gives
// rand_a's 12 bits (the caller's randomness: two vCons of one host in
// one millisecond differ only there).
func UUIDv8(now time.Time, fqhn string, randA uint16) string {
	var u [16]byte
	ms := uint64(now.UnixMilli())
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	binary.BigEndian.PutUint16(u[6:8], 0x8000|randA&0x0fff) // version 8
	h := sha1.Sum([]byte(fqhn))
	b := binary.BigEndian.Uint64(h[:8]) >> 2 // the high 62 bits
	binary.BigEndian.PutUint64(u[8:16], 0x8000000000000000|b)
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], u[10:16])
	return string(s[:])
}
