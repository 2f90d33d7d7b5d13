package sipgen

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

const (
	// nanoseconds: pcapng if_tsresol 9 (10^-9 s).
	nsResolution = 9
	// application names the writer in the section header; host and OS are
	// left out so the bytes do not depend on the machine that wrote them.
	application = "fieldtap sipgen"
	ifaceName   = "span0"
	// linkEthernet is LINKTYPE_ETHERNET, the one interface's link type.
	linkEthernet = 1
)

// pcapng block types and option codes (the pcapng draft, sections 4 and 3.5).
const (
	blockSectionHeader = 0x0A0D0D0A
	blockInterface     = 0x00000001
	blockEnhanced      = 0x00000006
	byteOrderMagic     = 0x1A2B3C4D
	optEnd             = 0
	optIfName          = 2
	optShbUserAppl     = 4
	optIfTsresol       = 9
)

// WritePcapng writes the packets of o to w as pcapng: one section, one
// Ethernet interface, nanosecond timestamps.
func WritePcapng(w io.Writer, o Options) error {
	ng, err := newNgWriter(w)
	if err != nil {
		return err
	}
	if err := Generate(o, ng.packet); err != nil {
		return err
	}
	return ng.flush()
}

// ngWriter writes the little-endian pcapng sipgen produces: a section
// header naming the application, one Ethernet interface named span0 with
// nanosecond timestamps, then an enhanced packet block a packet. Only
// these three blocks are needed, so they are written here rather than by a
// packet library, whose link-type tables would be linked into the daemon.
type ngWriter struct {
	w *bufio.Writer
}

func newNgWriter(w io.Writer) (*ngWriter, error) {
	ng := &ngWriter{w: bufio.NewWriter(w)}
	shb := binary.LittleEndian.AppendUint32(nil, byteOrderMagic)
	shb = binary.LittleEndian.AppendUint16(shb, 1)          // major version
	shb = binary.LittleEndian.AppendUint16(shb, 0)          // minor version
	shb = binary.LittleEndian.AppendUint64(shb, ^uint64(0)) // section length unknown
	shb = appendOption(shb, optShbUserAppl, []byte(application))
	shb = binary.LittleEndian.AppendUint32(shb, optEnd)
	idb := binary.LittleEndian.AppendUint16(nil, linkEthernet)
	idb = binary.LittleEndian.AppendUint16(idb, 0) // reserved
	idb = binary.LittleEndian.AppendUint32(idb, 0) // snap length: none
	idb = appendOption(idb, optIfName, []byte(ifaceName))
	idb = appendOption(idb, optIfTsresol, []byte{nsResolution})
	idb = binary.LittleEndian.AppendUint32(idb, optEnd)
	ng.block(blockSectionHeader, shb)
	ng.block(blockInterface, idb)
	if err := ng.w.Flush(); err != nil {
		return nil, fmt.Errorf("sipgen: pcapng header: %w", err)
	}
	return ng, nil
}

// appendOption appends one option: code, length, value padded to 32 bits.
func appendOption(b []byte, code uint16, v []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	return append(b, make([]byte, pad4(len(v)))...)
}

func pad4(n int) int { return (4 - n&3) & 3 }

// block writes a block of type typ around body, which is whole 32-bit
// words; bufio keeps the first write error and flush reports it.
func (ng *ngWriter) block(typ uint32, body []byte) {
	var h [8]byte
	n := uint32(len(h) + len(body) + 4)
	binary.LittleEndian.PutUint32(h[0:4], typ)
	binary.LittleEndian.PutUint32(h[4:8], n)
	ng.w.Write(h[:])
	ng.w.Write(body)
	ng.w.Write(h[4:8])
}

// packet writes p as an enhanced packet block on interface 0.
func (ng *ngWriter) packet(p Packet) error {
	var h [28]byte
	n := len(h) + len(p.Data) + pad4(len(p.Data)) + 4
	ts := uint64(p.Time.UnixNano())
	binary.LittleEndian.PutUint32(h[0:4], blockEnhanced)
	binary.LittleEndian.PutUint32(h[4:8], uint32(n))
	binary.LittleEndian.PutUint32(h[8:12], 0) // interface
	binary.LittleEndian.PutUint32(h[12:16], uint32(ts>>32))
	binary.LittleEndian.PutUint32(h[16:20], uint32(ts))
	binary.LittleEndian.PutUint32(h[20:24], uint32(len(p.Data))) // captured
	binary.LittleEndian.PutUint32(h[24:28], uint32(len(p.Data))) // on the wire
	var padding [3]byte
	ng.w.Write(h[:])
	ng.w.Write(p.Data)
	ng.w.Write(padding[:pad4(len(p.Data))])
	_, err := ng.w.Write(h[4:8])
	if err != nil {
		return fmt.Errorf("sipgen: pcapng packet at %s: %w", p.Time.Format(time.RFC3339Nano), err)
	}
	return nil
}

func (ng *ngWriter) flush() error {
	if err := ng.w.Flush(); err != nil {
		return fmt.Errorf("sipgen: pcapng flush: %w", err)
	}
	return nil
}
