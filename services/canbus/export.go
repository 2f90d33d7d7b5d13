package canbus

import "strconv"

const hexDigits = "0123456789ABCDEF"

// AppendCandump appends r as one candump -l line labelled iface. It must
// stay byte-identical to drivers/canlog.AppendLine (a test there checks),
// but services/ may not import drivers/.
func AppendCandump(dst []byte, iface string, r *Record) []byte {
	dst = append(dst, '(')
	s, us := r.Time.Unix(), r.Time.Nanosecond()/1000
	if s < 0 {
		s, us = 0, 0
	}
	dst = strconv.AppendInt(dst, s, 10)
	dst = append(dst, '.')
	for d := 100000; d > 0; d /= 10 {
		dst = append(dst, byte('0'+us/d%10))
	}
	dst = append(dst, ") "...)
	dst = append(dst, iface...)
	dst = append(dst, ' ')
	id, digits := r.ID&0x7FF, 3
	switch {
	case r.ID&FlagERR != 0:
		id, digits = r.ID&(FlagERR|0x1FFFFFFF), 8
	case r.ID&FlagEFF != 0:
		id, digits = r.ID&0x1FFFFFFF, 8
	}
	for i := digits - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[id>>(4*i)&0xF])
	}
	dst = append(dst, '#')
	if r.ID&FlagRTR != 0 {
		return append(dst, 'R', '\n')
	}
	for _, b := range r.Payload() {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0xF])
	}
	return append(dst, '\n')
}
