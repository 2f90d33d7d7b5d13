package canre

import "slices"

// Checksum search bounds.
const (
	// MinChecksumScore is the share of frames a candidate must explain:
	// a real checksum explains all of them, one bad frame in twenty is a
	// capture error.
	MinChecksumScore = 0.95
	// MinChecksumValues is how many distinct values the checksum byte
	// must take: a two-valued status byte matches some sum by accident.
	MinChecksumValues = 4
	// MaxChecksums bounds the candidates listed, best first.
	MaxChecksums = 16
)

// Checksum algorithms, each over the payload's other bytes in order.
const (
	AlgXOR         = "xor8"
	AlgSum         = "sum8"                 // sum mod 256
	AlgSumNegated  = "sum8_twos_complement" // makes the whole payload sum to 0
	AlgSumIDLength = "sum8_id_length"       // + the id's bytes and the length (Toyota style)
	AlgCRC8J1850   = "crc8_sae_j1850"       // poly 0x1D, init 0xFF, xor out 0xFF
	AlgCRC8Poly07  = "crc8_poly07"          // poly 0x07, init 0x00 (ITU/SMBus)
	AlgCRC8AUTOSAR = "crc8_autosar"         // poly 0x2F, init 0xFF, xor out 0xFF (AUTOSAR E2E P2)
)

// checksumAlgs lists what FindChecksums tries, in report order.
var checksumAlgs = [...]string{AlgXOR, AlgSum, AlgSumNegated, AlgSumIDLength, AlgCRC8J1850, AlgCRC8Poly07, AlgCRC8AUTOSAR}

// ChecksumCandidate is a byte that one algorithm computes from the rest.
type ChecksumCandidate struct {
	Byte      int // 0-based
	Algorithm string
	Score     float64 // share of frames it explains
	Matches   int
}

// Checksums is the checksum search of one id.
type Checksums struct {
	Method     string
	Frames     int
	Algorithms []string
	Candidates []ChecksumCandidate
	Truncated  bool
}

// FindChecksums tries, for every byte that takes at least
// MinChecksumValues values, each algorithm over the other bytes (of the
// length every frame has) and keeps those that explain MinChecksumScore
// of the frames.
func FindChecksums(s *Series) Checksums {
	out := Checksums{Method: "byte_equals_algorithm_over_other_bytes", Frames: s.Len(), Algorithms: checksumAlgs[:], Candidates: []ChecksumCandidate{}}
	idBytes := idBytesOf(s.ID)
	var rest [8]byte
	for k := range s.DLC {
		distinct := map[byte]bool{}
		for i := range s.Data {
			distinct[s.Data[i][k]] = true
		}
		if len(distinct) < MinChecksumValues {
			continue
		}
		for _, alg := range checksumAlgs {
			hits := 0
			for i := range s.Data {
				d := &s.Data[i]
				o := append(append(rest[:0], d[:k]...), d[k+1:s.DLC]...)
				if checksum(alg, o, idBytes, s.DLC) == d[k] {
					hits++
				}
			}
			score := float64(hits) / float64(s.Len())
			if score >= MinChecksumScore {
				out.Candidates = append(out.Candidates, ChecksumCandidate{Byte: k, Algorithm: alg, Score: round(score), Matches: hits})
			}
		}
	}
	slices.SortStableFunc(out.Candidates, func(a, b ChecksumCandidate) int { return cmpFloat(b.Score, a.Score) })
	if len(out.Candidates) > MaxChecksums {
		out.Candidates, out.Truncated = out.Candidates[:MaxChecksums], true
	}
	return out
}

// idBytesOf is the id big-endian without leading zero bytes, as the
// Toyota-style sum adds it.
func idBytesOf(id uint32) []byte {
	v := id & 0x1FFFFFFF
	b := []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
	for len(b) > 1 && b[0] == 0 {
		b = b[1:]
	}
	return b
}

func checksum(alg string, o, id []byte, dlc int) byte {
	var s byte
	switch alg {
	case AlgXOR:
		for _, b := range o {
			s ^= b
		}
	case AlgSum, AlgSumNegated, AlgSumIDLength:
		for _, b := range o {
			s += b
		}
		switch alg {
		case AlgSumNegated:
			s = -s
		case AlgSumIDLength:
			for _, b := range id {
				s += b
			}
			s += byte(dlc)
		}
	case AlgCRC8J1850:
		s = crc8(o, 0x1D, 0xFF, 0xFF)
	case AlgCRC8Poly07:
		s = crc8(o, 0x07, 0x00, 0x00)
	case AlgCRC8AUTOSAR:
		s = crc8(o, 0x2F, 0xFF, 0xFF)
	}
	return s
}

// crc8 is the bitwise CRC-8, MSB first, unreflected.
func crc8(data []byte, poly, init, xorOut byte) byte {
	c := init
	for _, b := range data {
		c ^= b
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ poly
			} else {
				c <<= 1
			}
		}
	}
	return c ^ xorOut
}

func round(v float64) float64 { return float64(int64(v*scoreDigits+0.5)) / scoreDigits }
