package j1939gen

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// WriteCandump writes the frames of o to w in candump -l format, one a line:
// "(1767225600.250123) can0 0CF00400#F07D7D...". Identifiers are 8 uppercase
// hex digits (extended), data uppercase hex, times in microseconds.
func WriteCandump(w io.Writer, o Options) error {
	if o.Start.Before(time.Unix(0, 0)) {
		return fmt.Errorf("j1939gen: start %v is before 1970, which candump cannot show", o.Start)
	}
	bw := bufio.NewWriter(w)
	iface := o.iface()
	err := Generate(o, func(f Frame) error {
		us := f.Time.UnixMicro()
		_, err := fmt.Fprintf(bw, "(%d.%06d) %s %08X#%X\n", us/1e6, us%1e6, iface, f.ID, f.Data)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
