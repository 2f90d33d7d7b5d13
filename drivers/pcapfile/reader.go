package pcapfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"

	"fieldtap/drivers/wire"
)

const (
	// maxRecord bounds one packet record: the largest snap length any
	// capture tool writes (262144) with room for jumbo loopback frames.
	maxRecord = 1 << 20
	// maxBlock bounds one pcapng block so a corrupt length cannot make us
	// allocate gigabytes.
	maxBlock = 16 << 20
	// maxInterfaces bounds the interfaces one pcapng section may declare.
	maxInterfaces = 1024
)

// Format is the container a file uses.
type Format string

// Formats.
const (
	FormatPcap   Format = "pcap"
	FormatPcapng Format = "pcapng"
)

// Magic numbers, as the first four bytes of the file read big-endian.
const (
	magicMicro        = 0xa1b2c3d4
	magicNano         = 0xa1b23c4d
	magicMicroSwapped = 0xd4c3b2a1
	magicNanoSwapped  = 0x4d3cb2a1
	blockSHB          = 0x0a0d0d0a
	byteOrderMagic    = 0x1a2b3c4d
)

// pcapng block types we read; others are skipped.
const (
	blockIDB = 1
	blockPB  = 2 // obsolete Packet Block
	blockSPB = 3
	blockEPB = 6
	blockDSB = 10 // Decryption Secrets Block
)

// SecretsTLSKeyLog is the Decryption Secrets Block type of an NSS key log
// ("TLSK"), the one editcap --inject-secrets tls writes.
const SecretsTLSKeyLog = 0x544c534b

// Sniff reports which format head (the first bytes of a file) is, or "".
func Sniff(head []byte) Format {
	if len(head) < 4 {
		return ""
	}
	switch binary.BigEndian.Uint32(head) {
	case magicMicro, magicNano, magicMicroSwapped, magicNanoSwapped:
		return FormatPcap
	case blockSHB:
		return FormatPcapng
	}
	return ""
}

// Record is one packet read from a file. Data is valid until the next call
// to Next.
type Record struct {
	Time      time.Time
	Link      wire.LinkType
	Interface int // pcapng interface index; 0 for pcap
	Data      []byte
	OrigLen   int
	Offset    int64 // byte offset of the record's header in the file
}

// FormatError says where and how a file stopped being a valid capture.
type FormatError struct {
	Offset int64
	Msg    string
}

func (e *FormatError) Error() string { return fmt.Sprintf("at byte offset %d: %s", e.Offset, e.Msg) }

type iface struct {
	link    wire.LinkType
	snaplen uint32
	// units per second of this interface's timestamps
	tsUnits uint64
	// nsPerUnit is 1e9/tsUnits when that divides evenly, else 0.
	nsPerUnit uint64
}

// byteOrder is a file's or section's byte order. A concrete type, not
// binary.ByteOrder: an interface's calls do not inline, and the reader
// makes eight of them a packet.
type byteOrder struct{ big bool }

var (
	bigEndian    = byteOrder{big: true}
	littleEndian = byteOrder{}
)

func (o byteOrder) Uint16(b []byte) uint16 {
	if o.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (o byteOrder) Uint32(b []byte) uint32 {
	if o.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// chunkSize is how much of the file one read(2) takes: large enough that
// the system call and the hand-off are paid once per few hundred packets.
const chunkSize = 256 << 10

// Reader reads records from a pcap or pcapng stream. It reads the stream
// in chunks and returns records as slices of the chunk, copying nothing.
type Reader struct {
	src    io.Reader
	srcErr error  // the error that ended src, returned once buf is used up
	buf    []byte // the current chunk; buf[pos:end] is unread
	pos    int
	end    int
	off    int64
	format Format
	order  byteOrder
	ifaces []iface // pcap has exactly one
	// next returns an empty chunk of at least n bytes to continue in;
	// the chunk being left is passed along. The plain Reader reuses one
	// chunk; Source hands the old one off with the frames that borrow it.
	next func(old []byte, n int) ([]byte, error)
	// secrets hears each Decryption Secrets Block (OnSecrets).
	secrets func(typ uint32, data []byte)
}

// OnSecrets makes the reader hand each pcapng Decryption Secrets Block to
// fn as it passes, before any packet after it is returned: its type
// (SecretsTLSKeyLog, …) and data, valid for the call. Without it the
// blocks are skipped, as any block not a packet is.
func (rd *Reader) OnSecrets(fn func(typ uint32, data []byte)) { rd.secrets = fn }

// The reader asks next for a chunk of at least n bytes; n is a block or
// record length, bounded by maxBlock.

// NewReader reads the file header from r. A record's Data is valid until
// the next call to Next.
func NewReader(r io.Reader) (*Reader, error) {
	return newReader(r, func(old []byte, n int) ([]byte, error) {
		if len(old) >= n {
			return old, nil
		}
		return make([]byte, max(n, chunkSize)), nil
	})
}

func newReader(r io.Reader, next func(old []byte, n int) ([]byte, error)) (*Reader, error) {
	rd := &Reader{src: r, next: next}
	if err := rd.fill(4); err != nil {
		return nil, err
	}
	if rd.end-rd.pos < 4 {
		return nil, &FormatError{0, "too short to be a capture file"}
	}
	head := rd.buf[rd.pos : rd.pos+4]
	rd.format = Sniff(head)
	var err error
	switch rd.format {
	case FormatPcap:
		err = rd.readPcapHeader()
	case FormatPcapng:
		err = rd.readSHB()
	default:
		return nil, &FormatError{0, fmt.Sprintf("not a pcap or pcapng file (starts % x)", head)}
	}
	if err != nil {
		return nil, err
	}
	return rd, nil
}

// Format is the file's container format.
func (rd *Reader) Format() Format { return rd.format }

// Offset is how many bytes of the file have been consumed.
func (rd *Reader) Offset() int64 { return rd.off }

// read returns the next n bytes of the stream, a slice of the current
// chunk. At the end of the stream it returns io.EOF if nothing was left,
// io.ErrUnexpectedEOF if fewer than n bytes were.
func (rd *Reader) read(n int) ([]byte, error) {
	if rd.end-rd.pos < n {
		if err := rd.fill(n); err != nil {
			return nil, err
		}
		if left := rd.end - rd.pos; left < n {
			rd.pos, rd.off = rd.end, rd.off+int64(left)
			if left == 0 {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		}
	}
	b := rd.buf[rd.pos : rd.pos+n : rd.pos+n]
	rd.pos += n
	rd.off += int64(n)
	return b, nil
}

// fill makes at least n bytes readable, moving the unread tail into a new
// chunk when the current one has no room; it returns only read errors
// other than the stream's end, which read reports as short.
func (rd *Reader) fill(n int) error {
	if rd.end-rd.pos >= n || rd.srcErr != nil {
		return ignoreEOF(rd.srcErr)
	}
	if len(rd.buf)-rd.pos < n {
		old, left := rd.buf, rd.buf[rd.pos:rd.end]
		nb, err := rd.next(old, n)
		if err != nil {
			return err
		}
		copy(nb, left) // overlapping when the chunk is reused: copy is memmove
		rd.buf, rd.pos, rd.end = nb, 0, len(left)
	}
	for rd.end-rd.pos < n && rd.srcErr == nil {
		m, err := rd.src.Read(rd.buf[rd.end:])
		rd.end += m
		if err != nil {
			rd.srcErr = err
		}
	}
	return ignoreEOF(rd.srcErr)
}

func ignoreEOF(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

func (rd *Reader) truncated(start int64, what string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &FormatError{start, "truncated " + what}
	}
	return fmt.Errorf("at byte offset %d: read %s: %w", start, what, err)
}

func (rd *Reader) readPcapHeader() error {
	b, err := rd.read(24)
	if err != nil {
		return rd.truncated(0, "file header", err)
	}
	units := uint64(1e6)
	switch binary.BigEndian.Uint32(b) {
	case magicMicro:
		rd.order = bigEndian
	case magicNano:
		rd.order, units = bigEndian, 1e9
	case magicMicroSwapped:
		rd.order = littleEndian
	case magicNanoSwapped:
		rd.order, units = littleEndian, 1e9
	}
	snap := rd.order.Uint32(b[16:])
	// The upper bits of the network field carry FCS information.
	link := wire.LinkType(rd.order.Uint32(b[20:]) & 0xffff)
	rd.ifaces = []iface{{link: link, snaplen: snap, tsUnits: units}}
	return nil
}

// Next returns the next packet, io.EOF at a clean end of file, or an error
// (a *FormatError for a malformed file) naming the byte offset.
func (rd *Reader) Next() (Record, error) {
	var rec Record
	if err := rd.nextInto(&rec); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// nextInto is Next writing into rec, field by field: a Record returned by
// value is built on the stack and copied in 16-byte moves that stall on
// the 8-byte stores just made (store forwarding), once per packet. On an
// error rec is left partly written.
func (rd *Reader) nextInto(rec *Record) error {
	if rd.format == FormatPcap {
		return rd.nextPcap(rec)
	}
	return rd.nextPcapng(rec)
}

func (rd *Reader) nextPcap(rec *Record) error {
	start := rd.off
	b, err := rd.read(16)
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return rd.truncated(start, "record header", err)
	}
	sec, frac := rd.order.Uint32(b), rd.order.Uint32(b[4:])
	incl, orig := rd.order.Uint32(b[8:]), rd.order.Uint32(b[12:])
	if incl > maxRecord {
		return &FormatError{start, fmt.Sprintf("record length %d exceeds %d", incl, maxRecord)}
	}
	ifc := rd.ifaces[0]
	data, err := rd.read(int(incl))
	if err != nil {
		return rd.truncated(start, fmt.Sprintf("record (%d bytes announced)", incl), err)
	}
	rec.Time = time.Unix(int64(sec), int64(frac)*int64(1e9/ifc.tsUnits)).UTC()
	rec.Link, rec.Interface = ifc.link, 0
	rec.Data, rec.OrigLen = data, int(max(orig, incl))
	rec.Offset = start
	return nil
}

func (rd *Reader) nextPcapng(rec *Record) error {
	for {
		start := rd.off
		b, err := rd.read(8)
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return rd.truncated(start, "block header", err)
		}
		btype := binary.BigEndian.Uint32(b)
		if btype == blockSHB {
			// A new section may change the byte order; reread its header.
			if err := rd.readSHBBody(start, b); err != nil {
				return err
			}
			continue
		}
		btype = rd.order.Uint32(b)
		blen := rd.order.Uint32(b[4:])
		if blen < 12 || blen%4 != 0 || blen > maxBlock {
			return &FormatError{start, fmt.Sprintf("block type %d has invalid length %d", btype, blen)}
		}
		body, err := rd.read(int(blen) - 8)
		if err != nil {
			return rd.truncated(start, fmt.Sprintf("block type %d (%d bytes announced)", btype, blen), err)
		}
		if rd.order.Uint32(body[len(body)-4:]) != blen {
			return &FormatError{start, fmt.Sprintf("block type %d: trailing length does not match %d", btype, blen)}
		}
		body = body[:len(body)-4]
		switch btype {
		case blockIDB:
			if err := rd.addInterface(start, body); err != nil {
				return err
			}
		case blockEPB, blockPB, blockSPB:
			return rd.packet(rec, start, btype, body)
		case blockDSB:
			if rd.secrets == nil {
				continue
			}
			typ, data, err := parseDSB(rd.order, body)
			if err != nil {
				return &FormatError{start, err.Error()}
			}
			rd.secrets(typ, data)
		}
	}
}

func (rd *Reader) readSHB() error {
	b, err := rd.read(8)
	if err != nil {
		return rd.truncated(0, "section header", err)
	}
	return rd.readSHBBody(0, b)
}

// readSHBBody reads a section header whose type and length words are in b.
func (rd *Reader) readSHBBody(start int64, b []byte) error {
	rawLen := [4]byte(b[4:8])
	bom, err := rd.read(4)
	if err != nil {
		return rd.truncated(start, "section header", err)
	}
	switch {
	case binary.BigEndian.Uint32(bom) == byteOrderMagic:
		rd.order = bigEndian
	case binary.LittleEndian.Uint32(bom) == byteOrderMagic:
		rd.order = littleEndian
	default:
		return &FormatError{start + 8, fmt.Sprintf("bad byte-order magic % x", bom)}
	}
	blen := rd.order.Uint32(rawLen[:])
	if blen < 28 || blen%4 != 0 || blen > maxBlock {
		return &FormatError{start, fmt.Sprintf("section header has invalid length %d", blen)}
	}
	rest, err := rd.read(int(blen) - 12)
	if err != nil {
		return rd.truncated(start, "section header", err)
	}
	if rd.order.Uint32(rest[len(rest)-4:]) != blen {
		return &FormatError{start, "section header: trailing length does not match"}
	}
	rd.ifaces = rd.ifaces[:0]
	return nil
}

func (rd *Reader) addInterface(start int64, body []byte) error {
	if len(body) < 8 {
		return &FormatError{start, "interface description block too short"}
	}
	if len(rd.ifaces) >= maxInterfaces {
		return &FormatError{start, fmt.Sprintf("more than %d interfaces in one section", maxInterfaces)}
	}
	ifc := iface{
		link:    wire.LinkType(rd.order.Uint16(body)),
		snaplen: rd.order.Uint32(body[4:]),
		tsUnits: 1e6,
	}
	opts := body[8:]
	for len(opts) >= 4 {
		code, olen := rd.order.Uint16(opts), int(rd.order.Uint16(opts[2:]))
		if code == 0 {
			break
		}
		padded := (olen + 3) &^ 3
		if 4+padded > len(opts) {
			return &FormatError{start, fmt.Sprintf("interface option %d overruns its block", code)}
		}
		if code == 9 && olen >= 1 { // if_tsresol
			v := opts[4]
			exp := uint64(v & 0x7f)
			switch {
			case v&0x80 != 0 && exp < 64:
				ifc.tsUnits = 1 << exp
			case v&0x80 == 0 && exp <= 19:
				ifc.tsUnits = uint64(math.Pow10(int(exp)))
			default:
				return &FormatError{start, fmt.Sprintf("unsupported timestamp resolution %#x", v)}
			}
		}
		opts = opts[4+padded:]
	}
	if 1e9%ifc.tsUnits == 0 {
		ifc.nsPerUnit = 1e9 / ifc.tsUnits
	}
	rd.ifaces = append(rd.ifaces, ifc)
	return nil
}

func (rd *Reader) packet(rec *Record, start int64, btype uint32, body []byte) error {
	var ifIndex int
	var tsHi, tsLo, capLen, origLen uint32
	var data []byte
	switch btype {
	case blockEPB, blockPB:
		if len(body) < 20 {
			return &FormatError{start, "packet block too short"}
		}
		if btype == blockEPB {
			ifIndex = int(rd.order.Uint32(body))
		} else {
			ifIndex = int(rd.order.Uint16(body))
		}
		tsHi, tsLo = rd.order.Uint32(body[4:]), rd.order.Uint32(body[8:])
		capLen, origLen = rd.order.Uint32(body[12:]), rd.order.Uint32(body[16:])
		if uint64(capLen) > uint64(len(body)-20) {
			return &FormatError{start, fmt.Sprintf("captured length %d overruns its block", capLen)}
		}
		data = body[20 : 20+capLen]
	case blockSPB:
		if len(body) < 4 {
			return &FormatError{start, "simple packet block too short"}
		}
		origLen = rd.order.Uint32(body)
		capLen = min(origLen, uint32(len(body)-4))
		data = body[4 : 4+capLen]
	}
	if ifIndex >= len(rd.ifaces) {
		return &FormatError{start, fmt.Sprintf("packet names interface %d, but the section declares %d", ifIndex, len(rd.ifaces))}
	}
	ifc := rd.ifaces[ifIndex]
	if btype == blockSPB && ifc.snaplen > 0 {
		capLen = min(capLen, ifc.snaplen)
		data = data[:capLen]
	}
	ts := uint64(tsHi)<<32 | uint64(tsLo)
	var sec, rem uint64
	switch ifc.tsUnits { // constant divisors are a multiply, not a 64-bit div a packet
	case 1e6:
		sec, rem = ts/1e6, ts%1e6
	case 1e9:
		sec, rem = ts/1e9, ts%1e9
	default:
		sec, rem = ts/ifc.tsUnits, ts%ifc.tsUnits
	}
	var nsec uint64
	if ifc.nsPerUnit > 0 { // µs or ns, as nearly every file has
		nsec = rem * ifc.nsPerUnit
	} else {
		// rem*1e9 can pass 2^64 at fine binary resolutions; divide the 128-bit product.
		hi, lo := bits.Mul64(rem, 1e9)
		nsec, _ = bits.Div64(hi, lo, ifc.tsUnits)
	}
	if sec > math.MaxInt64/2 {
		return &FormatError{start, "timestamp out of range"}
	}
	rec.Time = time.Unix(int64(sec), int64(nsec)).UTC()
	rec.Link, rec.Interface = ifc.link, ifIndex
	rec.Data, rec.OrigLen = data, int(max(origLen, capLen))
	rec.Offset = start
	return nil
}

// parseDSB reads the body of a Decryption Secrets Block (without its
// type, length and trailing length words) in byte order o: the secrets'
// type and data.
func parseDSB(o byteOrder, body []byte) (uint32, []byte, error) {
	if len(body) < 8 {
		return 0, nil, fmt.Errorf("decryption secrets block of %d bytes, want at least 8", len(body))
	}
	typ, n := o.Uint32(body), o.Uint32(body[4:])
	if uint64(n) > uint64(len(body)-8) {
		return 0, nil, fmt.Errorf("decryption secrets block: secrets length %d overruns its block (%d)", n, len(body)-8)
	}
	return typ, body[8 : 8+n], nil
}
