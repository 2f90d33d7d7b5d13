package pcapng

import (
	"encoding/binary"
	"time"
)

// Block types (pcapng §4).
const (
	BlockSHB uint32 = 0x0A0D0D0A // section header
	BlockIDB uint32 = 1          // interface description
	BlockEPB uint32 = 6          // enhanced packet
)

// Option codes this package writes and reads (pcapng §3.5, §4.1, §4.2).
const (
	optEnd         = 0
	optComment     = 1
	optShbUserAppl = 4
	optIfName      = 2
	optIfDesc      = 3
	optIfTsresol   = 9
)

// byteOrderMagic opens every section header body (pcapng §4.1).
const byteOrderMagic = 0x1A2B3C4D

// Fixed sizes (pcapng §4).
const (
	blockFrame = 12 // type, leading length, trailing length
	shbFixed   = 16 // byte-order magic, version, section length
	idbFixed   = 8  // link type, reserved, snap length
	epbFixed   = 20 // interface, timestamp high and low, captured and original length
	optHeader  = 4  // option code and length
)

// MaxOptionText bounds a text option (a name, a comment) this package
// writes: longer text is cut, so one option never outgrows a block.
const MaxOptionText = 1024

// nanosecondResolution is if_tsresol 9: timestamps in units of 10^-9 s.
const nanosecondResolution = 9

var le = binary.LittleEndian

// Interface is one interface description: what a port's frames are.
type Interface struct {
	Link        uint16 // LINKTYPE_ value
	SnapLen     uint32 // 0: no limit
	Name        string // if_name: the port name
	Description string // if_description; empty writes none
	// Units is timestamp units per second as the block declared it when
	// read (if_tsresol); a written block always declares nanoseconds.
	Units uint64
}

// Packet is one enhanced packet block.
type Packet struct {
	Interface uint32 // index of its interface in this section
	Time      time.Time
	Data      []byte // the bytes recorded (at most the snap length)
	OrigLen   int    // length on the wire; less than len(Data) means len(Data)
	Comment   string // opt_comment; empty writes none
}

// pad4 rounds n up to a multiple of 4.
func pad4(n int) int { return (n + 3) &^ 3 }

func optLen(text string) int {
	if text == "" {
		return 0
	}
	return optHeader + pad4(min(len(text), MaxOptionText))
}

// begin reserves a block of total bytes and returns the buffer and the
// offset of the body.
func begin(dst []byte, typ uint32, total int) ([]byte, int) {
	start := len(dst)
	dst = append(dst, make([]byte, total)...)
	le.PutUint32(dst[start:], typ)
	le.PutUint32(dst[start+4:], uint32(total))
	le.PutUint32(dst[start+total-4:], uint32(total))
	return dst, start + 8
}

// putOpt writes a text option at b[off:] and returns the offset after it.
func putOpt(b []byte, off int, code uint16, text string) int {
	if text == "" {
		return off
	}
	text = text[:min(len(text), MaxOptionText)]
	le.PutUint16(b[off:], code)
	le.PutUint16(b[off+2:], uint16(len(text)))
	copy(b[off+optHeader:], text)
	return off + optHeader + pad4(len(text))
}

// AppendSHB appends a section header naming app as shb_userappl.
func AppendSHB(dst []byte, app string) []byte {
	opts := optLen(app)
	if opts > 0 {
		opts += optHeader
	}
	total := blockFrame + shbFixed + opts
	dst, body := begin(dst, BlockSHB, total)
	le.PutUint32(dst[body:], byteOrderMagic)
	le.PutUint16(dst[body+4:], 1)          // major version
	le.PutUint16(dst[body+6:], 0)          // minor version
	le.PutUint64(dst[body+8:], ^uint64(0)) // section length unknown (-1)
	if opts > 0 {
		putOpt(dst, body+shbFixed, optShbUserAppl, app) // end-of-options is the zeroed tail
	}
	return dst
}

// AppendIDB appends an interface description with if_name, an optional
// if_description, and nanosecond timestamps (if_tsresol 9).
func AppendIDB(dst []byte, ifc Interface) []byte {
	opts := optLen(ifc.Name) + optLen(ifc.Description) + optHeader + 4 + optHeader
	total := blockFrame + idbFixed + opts
	dst, body := begin(dst, BlockIDB, total)
	le.PutUint16(dst[body:], ifc.Link)
	le.PutUint32(dst[body+4:], ifc.SnapLen)
	off := putOpt(dst, body+idbFixed, optIfName, ifc.Name)
	off = putOpt(dst, off, optIfDesc, ifc.Description)
	le.PutUint16(dst[off:], optIfTsresol)
	le.PutUint16(dst[off+2:], 1)
	dst[off+optHeader] = nanosecondResolution
	return dst
}

// EPBSize is the bytes AppendEPB adds for p.
func EPBSize(p Packet) int {
	opts := optLen(p.Comment)
	if opts > 0 {
		opts += optHeader
	}
	return blockFrame + epbFixed + pad4(len(p.Data)) + opts
}

// AppendEPB appends an enhanced packet block with a nanosecond timestamp.
// A time before the epoch is written as the epoch.
func AppendEPB(dst []byte, p Packet) []byte {
	total := EPBSize(p)
	dst, body := begin(dst, BlockEPB, total)
	ns := uint64(max(p.Time.UnixNano(), 0))
	le.PutUint32(dst[body:], p.Interface)
	le.PutUint32(dst[body+4:], uint32(ns>>32))
	le.PutUint32(dst[body+8:], uint32(ns))
	le.PutUint32(dst[body+12:], uint32(len(p.Data)))
	le.PutUint32(dst[body+16:], uint32(max(p.OrigLen, len(p.Data))))
	copy(dst[body+epbFixed:], p.Data)
	if p.Comment != "" {
		putOpt(dst, body+epbFixed+pad4(len(p.Data)), optComment, p.Comment)
	}
	return dst
}
