package wire

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"time"
)

// Vector's ASC and BLF CAN logs, written for exports (export_canlog); the
// readers are drivers/canfiles'. Both take frames oldest first and time
// them from start, the first frame's time cut to the millisecond their
// headers hold: a frame's time comes back to the microsecond (ASC) or the
// nanosecond (BLF). A frame older than start is written at start. Dates
// are UTC. Every frame is on channel 1.

// ascDate is the date layout of ASC's date and Begin Triggerblock lines.
const ascDate = "Mon Jan 02 03:04:05.000 pm 2006"

// ASCStart is the start an ASC or BLF log of frames from t on states.
func ASCStart(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// AppendASCHeader appends an ASC file's header: date, hex base, absolute
// timestamps, the trigger block's start.
func AppendASCHeader(dst []byte, start time.Time) []byte {
	d := start.UTC().Format(ascDate)
	dst = fmt.Appendf(dst, "date %s\nbase hex  timestamps absolute\nno internal events logged\n", d)
	return fmt.Appendf(dst, "// version 9.0.0\nBegin Triggerblock %s\n   0.000000 Start of measurement\n", d)
}

// AppendASC appends one frame's line: a data frame, "r" for a remote
// request, ErrorFrame for an error frame, a CANFD line for a frame whose
// flags (wire's CAN FD flags byte) have CANFDFDF. id carries the flag
// bits.
func AppendASC(dst []byte, start, t time.Time, id uint32, flags uint8, data []byte) []byte {
	off := (max(t.Sub(start), 0) + time.Microsecond/2) / time.Microsecond // to the nearest µs
	if flags&CANFDFDF != 0 && id&CANERR == 0 {
		return appendASCFD(fmt.Appendf(dst, "%4d.%06d CANFD   1 Rx   ", off/1e6, off%1e6), id, flags, data)
	}
	dst = fmt.Appendf(dst, "%4d.%06d 1  ", off/1e6, off%1e6)
	if id&CANERR != 0 {
		return append(dst, "ErrorFrame\n"...)
	}
	n := len(dst)
	dst = fmt.Appendf(dst, "%X", CANID(id))
	if id&CANEFF != 0 {
		dst = append(dst, 'x')
	}
	for len(dst)-n < 15 {
		dst = append(dst, ' ')
	}
	if id&CANRTR != 0 {
		return fmt.Appendf(dst, " Rx   r %X\n", len(data))
	}
	dst = fmt.Appendf(dst, " Rx   d %X", len(data))
	for _, b := range data {
		dst = append(dst, ' ', hexDigits[b>>4], hexDigits[b&15])
	}
	return append(dst, '\n')
}

// appendASCFD appends a CANFD line's fields after its direction as
// Vector's ASC format (and python-can's writer) lays them out: id, BRS,
// ESI, DLC, data length, data, message duration and length (unknown: 0),
// flags (EDL 0x1000, BRS 0x2000, ESI 0x4000), CRC and bit timings (0).
func appendASCFD(dst []byte, id uint32, flags uint8, data []byte) []byte {
	dst = fmt.Appendf(dst, "%X", CANID(id))
	if id&CANEFF != 0 {
		dst = append(dst, 'x')
	}
	fd := uint32(0x1000)
	brs, esi := 0, 0
	if flags&CANFDBRS != 0 {
		brs, fd = 1, fd|0x2000
	}
	if flags&CANFDESI != 0 {
		esi, fd = 1, fd|0x4000
	}
	dst = fmt.Appendf(dst, " %d %d %x %2d", brs, esi, CANFDDLC(len(data)), len(data))
	for _, b := range data {
		dst = append(dst, ' ', hexDigits[b>>4], hexDigits[b&15])
	}
	return fmt.Appendf(dst, " %8d %4d %8X %8d %8d %8d %8d %8d\n", 0, 0, fd, 0, 0, 0, 0, 0)
}

// AppendASCEnd ends the trigger block.
func AppendASCEnd(dst []byte) []byte { return append(dst, "End TriggerBlock\n"...) }

// BLF layout as drivers/canfiles reads it.
const (
	blfHeaderSize    = 144
	blfObjHeaderSize = 32 // base header and version 1 header
	blfContainerHead = 32 // base header and compression, size fields
	// BLFContainerBytes is the uncompressed bytes a log container holds,
	// as Vector's tools and python-can write them.
	BLFContainerBytes = 128 << 10
)

// BLFWriter lays frames out as a BLF file: CAN_MESSAGE objects (and
// CAN_ERROR_EXT for error frames, CAN_FD_MESSAGE_64 for CAN FD frames)
// with nanosecond timestamps, in
// zlib-compressed log containers.
type BLFWriter struct {
	start, stop  time.Time
	out          bytes.Buffer // the file after its header
	obj          []byte       // objects not yet in a container
	objects      uint32
	uncompressed uint64
	z            *zlib.Writer
}

// NewBLFWriter returns a writer timing frames from start.
func NewBLFWriter(start time.Time) *BLFWriter {
	return &BLFWriter{start: start.UTC(), stop: start.UTC(), uncompressed: blfHeaderSize}
}

// Add lays one frame out; id carries the flag bits, flags is wire's CAN
// FD flags byte (CANFDFDF for a CAN FD frame).
func (w *BLFWriter) Add(t time.Time, id uint32, flags uint8, data []byte) {
	off := uint64(max(t.Sub(w.start), 0))
	if t.After(w.stop) {
		w.stop = t
	}
	// CAN_MESSAGE: 16 bytes; CAN_ERROR_EXT: 32; CAN_FD_MESSAGE_64: 40 and
	// the data.
	typ, body := uint32(1), [40 + MaxCANFDData]byte{}
	n := 16
	raw := CANID(id)
	if id&CANEFF != 0 {
		raw |= 1 << 31
	}
	switch {
	case flags&CANFDFDF != 0 && id&CANERR == 0:
		// channel, DLC, valid bytes, tx count, id, frame length, flags
		// (EDL 0x1000, BRS 0x2000, ESI 0x4000), bit timings, offsets,
		// bit count, direction, ext data offset, CRC; then the data.
		typ, n = 101, 40+len(data)
		body[0], body[1], body[2] = 1, byte(CANFDDLC(len(data))), byte(len(data))
		binary.LittleEndian.PutUint32(body[4:], raw)
		fd := uint32(0x1000)
		if flags&CANFDBRS != 0 {
			fd |= 0x2000
		}
		if flags&CANFDESI != 0 {
			fd |= 0x4000
		}
		binary.LittleEndian.PutUint32(body[12:], fd)
		copy(body[40:], data)
	case id&CANERR != 0:
		typ, n = 73, 32
		binary.LittleEndian.PutUint16(body[0:], 1)
		body[10] = byte(len(data))
		binary.LittleEndian.PutUint32(body[16:], 0)
		copy(body[24:], data)
	default:
		binary.LittleEndian.PutUint16(body[0:], 1)
		if id&CANRTR != 0 {
			body[2] = 0x80
		}
		body[3] = byte(len(data))
		binary.LittleEndian.PutUint32(body[4:], raw)
		copy(body[8:16], data)
	}
	size := blfObjHeaderSize + n
	o := w.obj
	o = append(o, "LOBJ"...)
	o = binary.LittleEndian.AppendUint16(o, blfObjHeaderSize)
	o = binary.LittleEndian.AppendUint16(o, 1)
	o = binary.LittleEndian.AppendUint32(o, uint32(size))
	o = binary.LittleEndian.AppendUint32(o, typ)
	o = binary.LittleEndian.AppendUint32(o, 2) // timestamps in nanoseconds
	o = binary.LittleEndian.AppendUint16(o, 0)
	o = binary.LittleEndian.AppendUint16(o, 0)
	o = binary.LittleEndian.AppendUint64(o, off)
	w.obj = append(append(o, body[:n]...), make([]byte, n%4)...)
	w.objects++
	for len(w.obj) >= BLFContainerBytes {
		w.container(w.obj[:BLFContainerBytes])
		w.obj = append(w.obj[:0], w.obj[BLFContainerBytes:]...)
	}
}

// container compresses data into one LOG_CONTAINER object.
func (w *BLFWriter) container(data []byte) {
	var z bytes.Buffer
	if w.z == nil {
		w.z = zlib.NewWriter(&z)
	} else {
		w.z.Reset(&z)
	}
	w.z.Write(data) // a bytes.Buffer takes every write
	w.z.Close()
	size := blfContainerHead + z.Len()
	h := make([]byte, 0, blfContainerHead)
	h = append(h, "LOBJ"...)
	h = binary.LittleEndian.AppendUint16(h, 16)
	h = binary.LittleEndian.AppendUint16(h, 1)
	h = binary.LittleEndian.AppendUint32(h, uint32(size))
	h = binary.LittleEndian.AppendUint32(h, 10) // LOG_CONTAINER
	h = binary.LittleEndian.AppendUint16(h, 2)  // zlib
	h = append(h, 0, 0, 0, 0, 0, 0)
	h = binary.LittleEndian.AppendUint32(h, uint32(len(data)))
	h = append(h, 0, 0, 0, 0)
	w.out.Write(h)
	w.out.Write(z.Bytes())
	w.out.Write(make([]byte, size%4))
	w.uncompressed += uint64(blfContainerHead + len(data))
}

// Bytes ends the file and returns it whole: header, containers.
func (w *BLFWriter) Bytes() []byte {
	if len(w.obj) > 0 {
		w.container(w.obj)
		w.obj = w.obj[:0]
	}
	h := make([]byte, 0, blfHeaderSize+w.out.Len())
	h = append(h, "LOGG"...)
	h = binary.LittleEndian.AppendUint32(h, blfHeaderSize)
	// Application 0 (no Vector tool), BLF version 2.6.8.1 as python-can.
	h = append(h, 0, 0, 0, 0, 2, 6, 8, 1)
	h = binary.LittleEndian.AppendUint64(h, uint64(blfHeaderSize+w.out.Len()))
	h = binary.LittleEndian.AppendUint64(h, w.uncompressed)
	h = binary.LittleEndian.AppendUint32(h, w.objects)
	h = binary.LittleEndian.AppendUint32(h, 0)
	h = appendSystemTime(h, w.start)
	h = appendSystemTime(h, w.stop)
	h = append(h, make([]byte, blfHeaderSize-len(h))...)
	return append(h, w.out.Bytes()...)
}

// appendSystemTime appends t as a Windows SYSTEMTIME.
func appendSystemTime(dst []byte, t time.Time) []byte {
	for _, v := range []int{t.Year(), int(t.Month()), int(t.Weekday()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond() / 1e6} {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
	}
	return dst
}
