package sipgen

import (
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

const (
	// nanoseconds: pcapng if_tsresol 9 (10^-9 s), as NgWriter always writes.
	nsResolution = 9
	// application names the writer in the section header; host and OS are
	// left out so the bytes do not depend on the machine that wrote them.
	application = "fieldtap sipgen"
	ifaceName   = "span0"
)

// WritePcapng writes the packets of o to w as pcapng: one section, one
// Ethernet interface, nanosecond timestamps.
func WritePcapng(w io.Writer, o Options) error {
	ng, err := pcapgo.NewNgWriterInterface(w,
		pcapgo.NgInterface{Name: ifaceName, LinkType: layers.LinkTypeEthernet, TimestampResolution: nsResolution},
		pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: application}})
	if err != nil {
		return fmt.Errorf("sipgen: pcapng header: %w", err)
	}
	err = Generate(o, func(p Packet) error {
		ci := gopacket.CaptureInfo{Timestamp: p.Time, CaptureLength: len(p.Data), Length: len(p.Data)}
		return ng.WritePacket(ci, p.Data)
	})
	if err != nil {
		return err
	}
	if err := ng.Flush(); err != nil {
		return fmt.Errorf("sipgen: pcapng flush: %w", err)
	}
	return nil
}
