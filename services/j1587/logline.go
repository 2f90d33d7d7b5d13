package j1587

import (
	"strconv"
	"time"
)

const hexDigits = "0123456789ABCDEF"

// AppendLogLine appends one line of the J1708 text log format,
// `(1.688000) j1708 80020028…F4\n`: seconds since the Unix epoch with
// microseconds, the tag (j2497 for trailer PLC messages), the message in
// upper-case hex with its checksum. drivers/j1708 reads it back.
func AppendLogLine(dst []byte, t time.Time, j2497 bool, msg []byte) []byte {
	us := t.Round(time.Microsecond).UnixMicro()
	if us < 0 {
		us = 0
	}
	dst = append(dst, '(')
	dst = strconv.AppendInt(dst, us/1e6, 10)
	dst = append(dst, '.')
	frac := us % 1e6
	for d := int64(1e5); d > 0; d /= 10 {
		dst = append(dst, byte('0'+frac/d%10))
	}
	if j2497 {
		dst = append(dst, ") j2497 "...)
	} else {
		dst = append(dst, ") j1708 "...)
	}
	for _, b := range msg {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0x0F])
	}
	return append(dst, '\n')
}
