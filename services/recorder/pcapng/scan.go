package pcapng

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"
)

// Bounds on what a scan accepts; a length past them is corruption, not a
// reason to allocate.
const (
	// MaxBlock bounds one block: the largest snap length any capture tool
	// writes (262144) with room for options, rounded up generously.
	MaxBlock = 1 << 20
	// MaxInterfaces bounds the interfaces one section may declare.
	MaxInterfaces = 1024
	// readBuffer is the scanner's read-ahead.
	readBuffer = 64 << 10
)

// Record kinds a Scanner returns.
const (
	KindSection   = "section"
	KindInterface = "interface"
	KindPacket    = "packet"
	KindOther     = "other" // a valid block of a type this package skips
)

// CorruptError says where a file stops being whole blocks and why. A scan
// that ends with one has read every block before Offset intact.
type CorruptError struct {
	Offset int64 // where the first bad block starts
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("pcapng: block at byte offset %d: %s", e.Offset, e.Reason)
}

// Record is one valid block.
type Record struct {
	Kind   string
	Type   uint32
	Offset int64 // of the block's first byte
	Len    int   // the block's total length
	// Interface is set for KindInterface, and for KindPacket the packet's
	// interface as its section declared it.
	Interface Interface
	// For KindPacket: the packet. Packet.Data aliases the scanner's buffer
	// and is valid until the next call to Next.
	Packet Packet
}

type ifState struct {
	Interface
	units uint64 // timestamp units per second
}

// Scanner reads a pcapng stream block by block. A block counts only when
// its leading and trailing lengths agree, are at least 12 and a multiple
// of 4, and its body is one this package can read.
type Scanner struct {
	r      *bufio.Reader
	off    int64 // end of the last valid block
	order  binary.ByteOrder
	ifaces []ifState
	buf    []byte
	err    error
}

// NewScanner returns a scanner reading r from its start.
func NewScanner(r io.Reader) *Scanner {
	return &Scanner{r: bufio.NewReaderSize(r, readBuffer)}
}

// NewScannerAt returns a scanner that continues a little-endian section
// at off, where r is positioned, with the interfaces the section declared
// before off: the recorder seeks into a segment it indexed. Interfaces
// with zero Units take nanoseconds, as this package writes them.
func NewScannerAt(r io.Reader, off int64, ifaces []Interface) *Scanner {
	s := &Scanner{r: bufio.NewReaderSize(r, readBuffer), off: off, order: binary.LittleEndian}
	for _, f := range ifaces {
		if f.Units == 0 {
			f.Units = 1e9
		}
		s.ifaces = append(s.ifaces, ifState{Interface: f, units: f.Units})
	}
	return s
}

// Offset is the end of the last valid block: where a torn file is cut.
func (s *Scanner) Offset() int64 { return s.off }

// Interfaces returns the interfaces the current section has declared.
func (s *Scanner) Interfaces() []Interface {
	out := make([]Interface, len(s.ifaces))
	for i, f := range s.ifaces {
		out[i] = f.Interface
	}
	return out
}

// Next returns the next valid block. At a clean end it returns io.EOF; at
// a block that is not whole (a torn tail, zeros, garbage) it returns a
// *CorruptError and every later call returns the same error.
func (s *Scanner) Next() (Record, error) {
	if s.err != nil {
		return Record{}, s.err
	}
	rec, err := s.next()
	if err != nil {
		s.err = err
		return Record{}, err
	}
	s.off += int64(rec.Len)
	return rec, nil
}

func (s *Scanner) corrupt(reason string) error {
	return &CorruptError{Offset: s.off, Reason: reason}
}

func (s *Scanner) next() (Record, error) {
	head, err := s.r.Peek(blockFrame)
	switch {
	case err == io.EOF && len(head) == 0:
		return Record{}, io.EOF
	case err != nil:
		return Record{}, s.corrupt(fmt.Sprintf("file ends %d bytes into a block header", len(head)))
	}
	typ := binary.LittleEndian.Uint32(head)
	if typ == BlockSHB {
		// The section's byte order is in its body, before the length can be read.
		if order, ok := sectionOrder(head[8:12]); ok {
			s.order = order
		} else {
			return Record{}, s.corrupt("section header without a byte-order magic")
		}
	} else if s.order == nil {
		return Record{}, s.corrupt("first block is not a section header")
	}
	typ = s.order.Uint32(head)
	total := s.order.Uint32(head[4:])
	switch {
	case total < blockFrame:
		return Record{}, s.corrupt(fmt.Sprintf("length %d is below the minimum of 12", total))
	case total%4 != 0:
		return Record{}, s.corrupt(fmt.Sprintf("length %d is not a multiple of 4", total))
	case total > MaxBlock:
		return Record{}, s.corrupt(fmt.Sprintf("length %d exceeds the %d-byte bound", total, MaxBlock))
	}
	if cap(s.buf) < int(total) {
		s.buf = make([]byte, total)
	}
	b := s.buf[:total]
	if n, err := io.ReadFull(s.r, b); err != nil {
		return Record{}, s.corrupt(fmt.Sprintf("file ends %d bytes into a %d-byte block", n, total))
	}
	if trail := s.order.Uint32(b[total-4:]); trail != total {
		return Record{}, s.corrupt(fmt.Sprintf("trailing length %d differs from leading length %d", trail, total))
	}
	rec := Record{Type: typ, Offset: s.off, Len: int(total), Kind: KindOther}
	body := b[8 : total-4]
	switch typ {
	case BlockSHB:
		rec.Kind = KindSection
		if len(body) < shbFixed {
			return Record{}, s.corrupt("section header shorter than its fixed fields")
		}
		if major := s.order.Uint16(body[4:]); major != 1 {
			return Record{}, s.corrupt(fmt.Sprintf("section version %d, want 1", major))
		}
		s.ifaces = s.ifaces[:0]
	case BlockIDB:
		rec.Kind = KindInterface
		ifc, err := s.interfaceBlock(body)
		if err != nil {
			return Record{}, err
		}
		rec.Interface = ifc.Interface
	case BlockEPB:
		rec.Kind = KindPacket
		if err := s.packetBlock(body, &rec); err != nil {
			return Record{}, err
		}
	}
	return rec, nil
}

func sectionOrder(b []byte) (binary.ByteOrder, bool) {
	switch {
	case binary.LittleEndian.Uint32(b) == byteOrderMagic:
		return binary.LittleEndian, true
	case binary.BigEndian.Uint32(b) == byteOrderMagic:
		return binary.BigEndian, true
	}
	return nil, false
}

func (s *Scanner) interfaceBlock(body []byte) (ifState, error) {
	if len(body) < idbFixed {
		return ifState{}, s.corrupt("interface description shorter than its fixed fields")
	}
	if len(s.ifaces) >= MaxInterfaces {
		return ifState{}, s.corrupt(fmt.Sprintf("more than %d interfaces in one section", MaxInterfaces))
	}
	ifc := ifState{Interface: Interface{Link: s.order.Uint16(body), SnapLen: s.order.Uint32(body[4:]), Units: 1e6}, units: 1e6}
	err := s.options(body[idbFixed:], func(code uint16, v []byte) error {
		switch code {
		case optIfName:
			ifc.Name = string(v)
		case optIfDesc:
			ifc.Description = string(v)
		case optIfTsresol:
			if len(v) != 1 {
				return errors.New("if_tsresol is not one byte")
			}
			u, ok := resolution(v[0])
			if !ok {
				return fmt.Errorf("if_tsresol %#x is finer than this reader keeps", v[0])
			}
			ifc.units, ifc.Units = u, u
		}
		return nil
	})
	if err != nil {
		return ifState{}, s.corrupt(err.Error())
	}
	s.ifaces = append(s.ifaces, ifc)
	return ifc, nil
}

// resolution turns if_tsresol into units per second: 10^-v, or 2^-v with
// the top bit set; beyond 10^-19 or 2^-63 a uint64 cannot hold it.
func resolution(v byte) (uint64, bool) {
	if v&0x80 != 0 {
		e := v & 0x7F
		return 1 << e, e <= 63
	}
	if v > 19 {
		return 0, false
	}
	return uint64(math.Pow10(int(v))), true
}

func (s *Scanner) packetBlock(body []byte, rec *Record) error {
	if len(body) < epbFixed {
		return s.corrupt("enhanced packet shorter than its fixed fields")
	}
	id := s.order.Uint32(body)
	if int64(id) >= int64(len(s.ifaces)) {
		return s.corrupt(fmt.Sprintf("packet names interface %d of %d declared", id, len(s.ifaces)))
	}
	capLen := s.order.Uint32(body[12:])
	if int64(capLen) > int64(len(body)-epbFixed) {
		return s.corrupt(fmt.Sprintf("captured length %d exceeds the block", capLen))
	}
	ifc := s.ifaces[id]
	ts := uint64(s.order.Uint32(body[4:]))<<32 | uint64(s.order.Uint32(body[8:]))
	sec := ts / ifc.units
	if sec >= math.MaxInt64/uint64(time.Second) {
		// Past 2262 a time no longer fits Unix nanoseconds, which every
		// reader of the recording compares.
		return s.corrupt("timestamp after the year 2262")
	}
	hi, lo := bits.Mul64(ts%ifc.units, 1e9)
	nsec, _ := bits.Div64(hi, lo, ifc.units)
	rec.Interface = ifc.Interface
	rec.Packet = Packet{
		Interface: id,
		Time:      time.Unix(int64(sec), int64(nsec)).UTC(),
		Data:      body[epbFixed : epbFixed+capLen],
		OrigLen:   int(s.order.Uint32(body[16:])),
	}
	err := s.options(body[epbFixed+pad4(int(capLen)):], func(code uint16, v []byte) error {
		if code == optComment {
			rec.Packet.Comment = string(v)
		}
		return nil
	})
	if err != nil {
		return s.corrupt(err.Error())
	}
	return nil
}

// options walks an options area; a missing end-of-options is allowed
// (the area may end exactly), an option running past it is not.
func (s *Scanner) options(b []byte, fn func(code uint16, v []byte) error) error {
	for len(b) >= optHeader {
		code, n := s.order.Uint16(b), int(s.order.Uint16(b[2:]))
		if code == optEnd {
			return nil
		}
		if optHeader+n > len(b) {
			return fmt.Errorf("option %d of %d bytes runs past its block", code, n)
		}
		if err := fn(code, b[optHeader:optHeader+n]); err != nil {
			return err
		}
		b = b[min(len(b), optHeader+pad4(n)):]
	}
	return nil
}
