package canre

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// Bounds shared by the analyses.
const (
	// MaxFrames bounds the frames of one id an analysis reads: a port's
	// ring holds 100 000 frames by default, one id at most all of them.
	MaxFrames = 100_000
	// MinFrames is the fewest frames an analysis reports on: below it a
	// counter, a checksum or an entropy says nothing.
	MinFrames = 8
)

// ErrFewFrames is returned when a window holds fewer than MinFrames
// frames of the id.
var ErrFewFrames = errors.New("canre: too few frames")

// Window selects frames by time: Since inclusive, Until exclusive; zero
// bounds are open.
type Window struct {
	Since, Until time.Time
}

func (w Window) contains(t time.Time) bool {
	return (w.Since.IsZero() || !t.Before(w.Since)) && (w.Until.IsZero() || t.Before(w.Until))
}

// Series is one id's frames in a window, oldest first.
type Series struct {
	ID    uint32 // with wire.CANEFF for 29-bit
	IDHex string
	Times []time.Time
	Data  [][8]byte
	// DLC is the smallest data length seen: analyses read only the bytes
	// every frame has. DLCs counts the lengths that differ from it.
	DLC       int
	Longer    int
	Truncated bool // more than MaxFrames frames matched; the oldest are read
	// le and be are each payload as one little- and big-endian word, so a
	// field is a shift and a mask.
	le, be []uint64
}

// Len is the number of frames.
func (s *Series) Len() int { return len(s.Times) }

// Frames collects the data frames of id (wire.CANEFF set for a 29-bit
// id) in w from a port's ring.
func Frames(snap ring.Snapshot[canbus.Record], id uint32, w Window) (*Series, error) {
	id &^= wire.CANRTR
	s := &Series{ID: id, IDHex: wire.FormatCANID(id), DLC: wire.MaxCANData}
	dlcs := []int{}
	snap.Range(snap.FirstSeq(), func(_ uint64, r canbus.Record) bool {
		if r.ID != id || !w.contains(r.Time) {
			return true
		}
		if len(s.Times) == MaxFrames {
			s.Truncated = true
			return false
		}
		s.Times = append(s.Times, r.Time)
		s.Data = append(s.Data, r.Data)
		dlcs = append(dlcs, int(r.Len))
		s.DLC = min(s.DLC, int(r.Len))
		return true
	})
	if len(s.Times) < MinFrames {
		return nil, fmt.Errorf("%w: %d frames of %s in the window, at least %d needed", ErrFewFrames, len(s.Times), s.IDHex, MinFrames)
	}
	for _, n := range dlcs {
		if n > s.DLC {
			s.Longer++
		}
	}
	s.words()
	return s, nil
}

func (s *Series) words() {
	s.le, s.be = make([]uint64, len(s.Data)), make([]uint64, len(s.Data))
	for i := range s.Data {
		s.le[i], s.be[i] = binary.LittleEndian.Uint64(s.Data[i][:]), binary.BigEndian.Uint64(s.Data[i][:])
	}
}

// raw is field f of frame i; f was checked against the payload.
func (s *Series) raw(i int, f Field) int64 {
	var u uint64
	if f.BigEndian {
		u = s.be[i] << flipOrder(f.StartBit) >> (64 - f.Length)
	} else {
		u = s.le[i] >> f.StartBit & (1<<f.Length - 1)
	}
	if f.Signed && u>>(f.Length-1)&1 == 1 {
		return int64(u) - 1<<f.Length
	}
	return int64(u)
}

// Field is a bit range of a payload in DBC numbering: for little-endian
// (Intel) StartBit is the least significant bit (byte·8 + bit), for
// big-endian (Motorola) the most significant.
type Field struct {
	StartBit  int
	Length    int
	BigEndian bool
	Signed    bool
}

// MaxFieldBits is the widest field a Series reads.
const MaxFieldBits = 32

// check refuses a field that does not fit a dlc-byte payload: its last
// bit is counted LSB-first for Intel and MSB-first for Motorola.
func (f Field) check(dlc int) error {
	if f.Length < 1 || f.Length > MaxFieldBits {
		return fmt.Errorf("canre: field length %d: want 1..%d", f.Length, MaxFieldBits)
	}
	end := f.StartBit + f.Length
	if f.BigEndian {
		end = f.StartBit/8*8 + 7 - f.StartBit%8 + f.Length
	}
	if f.StartBit < 0 || end > 8*dlc {
		return fmt.Errorf("canre: field at bit %d, %d bits, runs outside the %d-byte payload", f.StartBit, f.Length, dlc)
	}
	return nil
}

// bit is bit b (DBC numbering, byte·8 + bit) of d.
func bit(d *[8]byte, b int) uint8 { return d[b>>3] >> (b & 7) & 1 }
