package slcan

// Control bytes of the Lawicel protocol.
const (
	cr   = '\r' // ends every line and is the plain acknowledgement
	lf   = '\n' // not Lawicel, but some firmware ends lines with CR LF
	bell = 0x07 // the reply to a refused command
)

// tokenKind is what the splitter found.
type tokenKind int

const (
	tokLine     tokenKind = iota // a non-empty line without its CR
	tokAck                       // an empty line, or z/Z at line start
	tokBell                      // BELL: a refused command
	tokOverlong                  // a run past maxLine was dropped up to its CR
)

// splitter cuts the adapter's byte stream into tokens. It keeps at most
// maxLine bytes and never allocates after construction.
type splitter struct {
	buf      [maxLine]byte
	n        int
	overlong bool // dropping until the next CR
	// afterZ: a z/Z ack was just emitted; its CR, if it follows, belongs
	// to it and is not a second ack (a second ack would be credited to the
	// next transmit).
	afterZ bool
}

// feed splits b, calling emit for each complete token; line aliases the
// splitter's buffer and is valid only during the call.
func (s *splitter) feed(b []byte, emit func(k tokenKind, line []byte)) {
	for _, c := range b {
		if s.afterZ {
			s.afterZ = false
			if c == cr {
				continue
			}
		}
		switch {
		case c == cr || c == lf:
			switch {
			case s.overlong:
				s.overlong = false
				emit(tokOverlong, nil)
			case s.n > 0:
				emit(tokLine, s.buf[:s.n])
			case c == cr:
				emit(tokAck, nil)
			}
			s.n = 0
		case c == bell:
			// BELL stands alone: it ends whatever was pending, which
			// was then not a line the adapter meant.
			if s.n > 0 {
				emit(tokLine, s.buf[:s.n])
				s.n = 0
			}
			emit(tokBell, nil)
		case s.overlong:
		case s.n == 0 && (c == 'z' || c == 'Z'):
			// The ack of a t/T transmit; some firmware omits its CR.
			emit(tokAck, nil)
			s.afterZ = true
		case s.n == len(s.buf):
			s.overlong = true
			s.n = 0
		default:
			s.buf[s.n] = c
			s.n++
		}
	}
}
