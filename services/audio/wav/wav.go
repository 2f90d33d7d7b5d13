// Package wav writes 16-bit linear PCM as a RIFF WAVE file (the
// canonical 44-byte header: RIFF, fmt with format tag 1, data), the form
// every player and sox read.
package wav

import (
	"encoding/binary"
	"fmt"
)

// HeaderBytes is the size of the canonical header before the samples.
const HeaderBytes = 44

// MaxDataBytes is the largest data chunk a RIFF file can describe (its
// sizes are 32-bit, and the RIFF size counts 36 header bytes too).
const MaxDataBytes = 1<<32 - 1 - 36

const (
	formatPCM     = 1
	bitsPerSample = 16
)

// Encode returns a WAVE file of interleaved 16-bit samples (for two
// channels: left, right, left, …) at rate samples per second per channel.
func Encode(rate, channels int, samples []int16) ([]byte, error) {
	data := 2 * len(samples)
	switch {
	case rate < 1 || rate > 1<<20:
		return nil, fmt.Errorf("wav: sample rate %d out of range", rate)
	case channels < 1 || channels > 8:
		return nil, fmt.Errorf("wav: %d channels out of range", channels)
	case len(samples)%channels != 0:
		return nil, fmt.Errorf("wav: %d samples do not divide into %d channels", len(samples), channels)
	case int64(data) > MaxDataBytes:
		return nil, fmt.Errorf("wav: %d bytes of samples exceed RIFF's 4 GiB", data)
	}
	b := make([]byte, HeaderBytes, HeaderBytes+data)
	le := binary.LittleEndian
	copy(b[0:], "RIFF")
	le.PutUint32(b[4:], uint32(36+data))
	copy(b[8:], "WAVE")
	copy(b[12:], "fmt ")
	le.PutUint32(b[16:], 16) // fmt chunk size for PCM
	le.PutUint16(b[20:], formatPCM)
	le.PutUint16(b[22:], uint16(channels))
	le.PutUint32(b[24:], uint32(rate))
	le.PutUint32(b[28:], uint32(rate*channels*bitsPerSample/8)) // byte rate
	le.PutUint16(b[32:], uint16(channels*bitsPerSample/8))      // block align
	le.PutUint16(b[34:], bitsPerSample)
	copy(b[36:], "data")
	le.PutUint32(b[40:], uint32(data))
	for _, s := range samples {
		b = le.AppendUint16(b, uint16(s))
	}
	return b, nil
}
