package j1708gen

import (
	"bufio"
	"fmt"
	"io"
	"time"
)

// WriteLog writes the messages of o to w, one a line, as in
// "(1.688000) j1708 80020028FF55007900B72600B80000F4": seconds since t0
// with six decimals (negative before t0), then every byte in uppercase hex,
// checksum included.
func WriteLog(w io.Writer, o Options, t0 time.Time) error {
	bw := bufio.NewWriter(w)
	err := Generate(o, func(m Message) error {
		_, err := fmt.Fprintf(bw, "(%s) j1708 %X\n", seconds(m.Time.Sub(t0)), m.Data)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// seconds formats d as seconds with microseconds, truncated toward zero.
func seconds(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	us := int64(d / time.Microsecond)
	return fmt.Sprintf("%s%d.%06d", sign, us/1e6, us%1e6)
}
