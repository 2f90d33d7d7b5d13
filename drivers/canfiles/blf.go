package canfiles

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// BLF layout (after Toby Lorenz's vector_blf, as python-can reads it):
// a file header ("LOGG", its size, …, the start as a SYSTEMTIME at byte
// 40), then objects ("LOBJ", header size, header version, object size,
// object type) padded by size%4 bytes. LOG_CONTAINER objects hold, zlib
// compressed or not, a byte stream of further objects that may run from
// one container into the next.
const (
	blfFileMagic  = "LOGG"
	blfObjMagic   = "LOBJ"
	blfBaseHeader = 16 // signature, header size, version, object size, type

	blfCANMessage     = 1
	blfCANError       = 2
	blfLogContainer   = 10
	blfCANErrorExt    = 73
	blfCANMessage2    = 86
	blfCANFDMessage   = 100
	blfCANFDMessage64 = 101
	blfCANFDError64   = 104

	blfNoCompression = 0
	blfZlib          = 2

	// maxContainer bounds a container's compressed and uncompressed
	// bytes: writers use 128 KiB (python-can, Vector's own); twice that is
	// held, a larger one counted as unreadable.
	maxContainer = 256 << 10
	// maxObject bounds an object inside the stream: a CAN FD object with
	// its 64 data bytes is under 200 bytes, other buses' objects more.
	maxObject = maxContainer
)

// ReadBLF reads a Vector BLF file: CAN_MESSAGE(2), CAN_FD_MESSAGE(_64)
// objects (CAN FD frames when their EDL flag is set, classic otherwise),
// CAN_ERROR(_EXT) and CAN_FD_ERROR_64 as error frames; other objects are
// ReasonOther, a
// container that does not decompress ReasonContainer (its objects are
// lost, reading goes on at the next), a damaged object ReasonMalformed
// (reading goes on at the next "LOBJ"). Offsets are the objects'
// timestamps (10 µs or 1 ns units, as each object's flags say) from the
// header's start time.
func ReadBLF(r io.Reader, frame func(*Frame) error, bad Bad) error {
	b := blfReader{r: r, frame: frame, bad: bad}
	return b.read()
}

type blfReader struct {
	r     io.Reader
	frame func(*Frame) error
	bad   Bad
	start time.Time
	pos   int64 // bytes of the file read
	// stream is uncompressed object bytes not yet read; streamPos is the
	// offset of its first byte in the whole uncompressed stream.
	stream    []byte
	streamPos int64
	obj       []byte // the top-level object being read
	f         Frame
}

func (b *blfReader) read() error {
	var head [blfBaseHeader]byte // enough to find the header's own size
	if _, err := io.ReadFull(b.r, head[:8]); err != nil || string(head[:4]) != blfFileMagic {
		return errors.New("not a BLF file: no LOGG header")
	}
	size := int64(binary.LittleEndian.Uint32(head[4:8]))
	if size < 56 || size > 1<<16 {
		return fmt.Errorf("BLF header size %d: not a BLF file", size)
	}
	rest := make([]byte, size-8)
	if _, err := io.ReadFull(b.r, rest); err != nil {
		return fmt.Errorf("BLF header: %w", err)
	}
	b.pos = size
	b.start = systemTime(rest[40-8 : 56-8])
	for {
		if _, err := io.ReadFull(b.r, head[:]); err != nil {
			if err == io.EOF {
				return b.endStream()
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				b.bad(b.pos, ReasonMalformed, errors.New("the file ends inside an object header"))
				return b.endStream()
			}
			return err
		}
		at := b.pos
		b.pos += blfBaseHeader
		if string(head[:4]) != blfObjMagic {
			if err := b.resync(head[:]); err != nil {
				return err
			}
			continue
		}
		objSize := int64(binary.LittleEndian.Uint32(head[8:12]))
		typ := binary.LittleEndian.Uint32(head[12:16])
		if objSize < blfBaseHeader || objSize-blfBaseHeader > maxContainer+64 {
			b.bad(at, ReasonMalformed, fmt.Errorf("object size %d", objSize))
			if err := b.resync(nil); err != nil {
				return err
			}
			continue
		}
		body := objSize - blfBaseHeader + objSize%4 // and its padding
		if cap(b.obj) < int(body) {
			b.obj = make([]byte, body)
		}
		b.obj = b.obj[:body]
		n, err := io.ReadFull(b.r, b.obj)
		b.pos += int64(n)
		if err != nil {
			if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
				b.bad(at, ReasonMalformed, fmt.Errorf("the file ends inside a %d-byte object", objSize))
				return b.endStream()
			}
			return err
		}
		body = objSize - blfBaseHeader
		if typ == blfLogContainer {
			if err := b.container(at, b.obj[:body]); err != nil {
				return err
			}
			continue
		}
		// An object outside any container: read it as one in the stream.
		if err := b.object(at, append(head[:], b.obj[:body]...)); err != nil {
			return err
		}
	}
}

// resync looks for the next "LOBJ" in the file after a damaged object,
// counting the damage once; have is what was already read past it.
func (b *blfReader) resync(have []byte) error {
	b.bad(b.pos-int64(len(have)), ReasonMalformed, errors.New("no LOBJ where an object should start"))
	buf := append([]byte(nil), have...)
	var chunk [4096]byte
	for {
		if i := bytes.Index(buf, []byte(blfObjMagic)); i >= 0 {
			// Put the object start back in front of the rest of the file.
			b.r = io.MultiReader(bytes.NewReader(append([]byte(nil), buf[i:]...)), b.r)
			b.pos -= int64(len(buf) - i)
			return nil
		}
		if len(buf) > 3 {
			buf = append(buf[:0], buf[len(buf)-3:]...)
		}
		n, err := b.r.Read(chunk[:])
		b.pos += int64(n)
		buf = append(buf, chunk[:n]...)
		if err == io.EOF {
			b.r = bytes.NewReader(nil) // nothing more to read
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// container decompresses a LOG_CONTAINER and reads the objects it
// completes.
func (b *blfReader) container(at int64, body []byte) error {
	if len(body) < 16 {
		b.bad(at, ReasonContainer, errors.New("container header cut short"))
		return nil
	}
	method := binary.LittleEndian.Uint16(body[0:2])
	size := int64(binary.LittleEndian.Uint32(body[8:12]))
	data := body[16:]
	switch {
	case size > maxContainer:
		b.bad(at, ReasonContainer, fmt.Errorf("container of %d bytes uncompressed: more than %d", size, maxContainer))
		return nil
	case method == blfNoCompression:
		b.stream = append(b.stream, data...)
	case method == blfZlib:
		zr, err := zlib.NewReader(bytes.NewReader(data))
		if err != nil {
			b.bad(at, ReasonContainer, fmt.Errorf("zlib: %w", err))
			return nil
		}
		n := len(b.stream)
		b.stream = append(b.stream, make([]byte, size)...)
		got, err := io.ReadFull(zr, b.stream[n:])
		if err == nil {
			// Reading to the end checks the stream's Adler-32 and that it
			// holds no more than the container said.
			var one [1]byte
			if _, err = zr.Read(one[:]); err == io.EOF {
				err = nil
			} else if err == nil {
				err = errors.New("more bytes than the container's size")
			}
		}
		if err != nil || int64(got) != size {
			b.stream = b.stream[:n]
			b.bad(at, ReasonContainer, fmt.Errorf("zlib: %d of %d bytes: %v", got, size, err))
			return nil
		}
	default:
		b.bad(at, ReasonContainer, fmt.Errorf("compression method %d", method))
		return nil
	}
	return b.drain()
}

// drain reads the whole objects at the front of the stream and keeps the
// partial one for the next container.
func (b *blfReader) drain() error {
	s := b.stream
	for {
		// Padding: the next object starts within a few bytes.
		i := bytes.Index(s[:min(len(s), 8)], []byte(blfObjMagic))
		if i < 0 {
			if len(s) < 8 {
				break
			}
			j := bytes.Index(s, []byte(blfObjMagic))
			if j < 0 {
				j = len(s) - 3
			}
			b.bad(b.streamPos, ReasonMalformed, errors.New("no LOBJ where an object should start in a container"))
			b.streamPos += int64(j)
			s = s[j:]
			continue
		}
		s = s[i:]
		b.streamPos += int64(i)
		if len(s) < blfBaseHeader {
			break
		}
		size := int(binary.LittleEndian.Uint32(s[8:12]))
		if size < blfBaseHeader || size > maxObject {
			b.bad(b.streamPos, ReasonMalformed, fmt.Errorf("object size %d", size))
			s = s[4:]
			b.streamPos += 4
			continue
		}
		if size > len(s) {
			break // continues in the next container
		}
		if err := b.object(b.streamPos, s[:size]); err != nil {
			return err
		}
		s = s[size:]
		b.streamPos += int64(size)
	}
	b.stream = append(b.stream[:0], s...)
	if len(b.stream) > maxObject {
		b.bad(b.streamPos, ReasonMalformed, errors.New("an object larger than the bound spans containers"))
		b.streamPos += int64(len(b.stream))
		b.stream = b.stream[:0]
	}
	return nil
}

// endStream counts what the last container left unfinished.
func (b *blfReader) endStream() error {
	if len(bytes.Trim(b.stream, "\x00")) > 0 {
		b.bad(b.streamPos, ReasonMalformed, errors.New("the file ends inside an object"))
	}
	return nil
}

// object reads one whole object (its base header included).
func (b *blfReader) object(at int64, o []byte) error {
	hdrSize := int(binary.LittleEndian.Uint16(o[4:6]))
	version := binary.LittleEndian.Uint16(o[6:8])
	typ := binary.LittleEndian.Uint32(o[12:16])
	var flags uint32
	var ts uint64
	switch {
	case version == 1 && len(o) >= 32:
		flags, ts = binary.LittleEndian.Uint32(o[16:20]), binary.LittleEndian.Uint64(o[24:32])
	case version == 2 && len(o) >= 40:
		flags, ts = binary.LittleEndian.Uint32(o[16:20]), binary.LittleEndian.Uint64(o[24:32])
	default:
		b.bad(at, ReasonMalformed, fmt.Errorf("object header version %d in %d bytes", version, len(o)))
		return nil
	}
	if hdrSize < 32 || hdrSize > len(o) {
		b.bad(at, ReasonMalformed, fmt.Errorf("object header size %d", hdrSize))
		return nil
	}
	unit := time.Nanosecond
	if flags == 1 {
		unit = 10 * time.Microsecond
	}
	if ts > uint64(maxOffset/unit) {
		b.bad(at, ReasonMalformed, fmt.Errorf("timestamp %d past a century", ts))
		return nil
	}
	f := &b.f
	*f = Frame{Offset: time.Duration(ts) * unit, Data: f.Data[:0]}
	f.Time = b.start.Add(f.Offset)
	body := o[hdrSize:]
	var err error
	switch typ {
	case blfCANMessage, blfCANMessage2:
		err = b.classic(body)
	case blfCANFDMessage:
		err = b.fd(body)
	case blfCANFDMessage64:
		err = b.fd64(body)
	case blfCANError, blfCANErrorExt, blfCANFDError64:
		if len(body) < 2 {
			err = errors.New("error frame object cut short")
			break
		}
		f.Channel = int(binary.LittleEndian.Uint16(body[0:2]))
		if typ == blfCANFDError64 {
			f.Channel = int(body[0])
		}
		f.setError()
	default:
		b.bad(at, ReasonOther, nil)
		return nil
	}
	if err != nil {
		b.bad(at, ReasonMalformed, err)
		return nil
	}
	return b.frame(f)
}

// classic reads CAN_MESSAGE(2): channel, flags (0x80 remote), DLC, id
// (bit 31 extended), 8 data bytes.
func (b *blfReader) classic(body []byte) error {
	if len(body) < 16 {
		return errors.New("CAN message object cut short")
	}
	f := &b.f
	f.Channel = int(binary.LittleEndian.Uint16(body[0:2]))
	flags, dlc := body[2], body[3]
	if err := f.blfID(binary.LittleEndian.Uint32(body[4:8]), flags&0x80 != 0); err != nil {
		return err
	}
	f.DLC = dlc
	if flags&0x80 == 0 {
		f.Data = append(f.Data, body[8:8+min(int(dlc), 8)]...)
	}
	return nil
}

// fd reads CAN_FD_MESSAGE: as a CAN message, then frame length, bit
// count, FD flags (EDL 1, BRS 2, ESI 4), valid bytes, 5 reserved bytes,
// 64 data bytes.
func (b *blfReader) fd(body []byte) error {
	if len(body) < 84 {
		return errors.New("CAN FD message object cut short")
	}
	f := &b.f
	f.Channel = int(binary.LittleEndian.Uint16(body[0:2]))
	flags, dlc, fdFlags, valid := body[2], body[3], body[13], int(body[14])
	if valid > 64 {
		return fmt.Errorf("CAN FD message of %d valid bytes", valid)
	}
	fd := fdFlags&1 != 0 || valid > 8 || dlc > 8
	if fd {
		f.setFD(fdFlags&2 != 0, fdFlags&4 != 0)
	}
	if err := f.blfID(binary.LittleEndian.Uint32(body[4:8]), !fd && flags&0x80 != 0); err != nil {
		return err
	}
	f.DLC = dlc
	if fd || flags&0x80 == 0 {
		f.Data = append(f.Data, body[20:20+valid]...)
	}
	return nil
}

// fd64 reads CAN_FD_MESSAGE_64: channel, DLC, valid bytes, tx count, id,
// frame length, flags (0x10 remote, 0x1000 EDL, 0x2000 BRS, 0x4000 ESI),
// … 40 bytes, then data.
func (b *blfReader) fd64(body []byte) error {
	if len(body) < 40 {
		return errors.New("CAN FD 64 object cut short")
	}
	f := &b.f
	f.Channel = int(body[0])
	dlc, valid := body[1], int(body[2])
	flags := binary.LittleEndian.Uint32(body[12:16])
	if valid > 64 {
		return fmt.Errorf("CAN FD 64 object of %d valid bytes", valid)
	}
	fd := flags&0x1000 != 0 || valid > 8 || dlc > 8
	if fd {
		f.setFD(flags&0x2000 != 0, flags&0x4000 != 0)
	}
	if err := f.blfID(binary.LittleEndian.Uint32(body[4:8]), !fd && flags&0x10 != 0); err != nil {
		return err
	}
	f.DLC = dlc
	if fd || flags&0x10 == 0 {
		// Valid bytes can count more than the object holds (python-can
		// issue 1905): the rest is zeros, as CANoe reads it.
		have := min(valid, len(body)-40)
		f.Data = append(f.Data, body[40:40+have]...)
		for range valid - have {
			f.Data = append(f.Data, 0)
		}
	}
	return nil
}

// blfID sets f's id from BLF's, whose bit 31 marks a 29-bit id.
func (f *Frame) blfID(raw uint32, rtr bool) error {
	ext := raw&0x80000000 != 0
	id := raw &^ 0x80000000
	if ext && id > 0x1FFFFFFF || !ext && id > 0x7FF {
		return fmt.Errorf("id %#x too large for its kind", raw)
	}
	f.setID(id, ext, rtr)
	return nil
}

// systemTime reads a Windows SYSTEMTIME (year, month, weekday, day, hour,
// minute, second, milliseconds; 16-bit each) as UTC; an unset or
// impossible one is the epoch.
func systemTime(b []byte) time.Time {
	var v [8]int
	for i := range v {
		v[i] = int(binary.LittleEndian.Uint16(b[2*i:]))
	}
	if v[0] < 1601 || v[1] < 1 || v[1] > 12 || v[3] < 1 || v[3] > 31 || v[4] > 23 || v[5] > 59 || v[6] > 59 || v[7] > 999 {
		return epoch
	}
	return time.Date(v[0], time.Month(v[1]), v[3], v[4], v[5], v[6], v[7]*int(time.Millisecond), time.UTC)
}
