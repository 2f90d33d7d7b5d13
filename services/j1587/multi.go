package j1587

// Section is one piece of a PID 192 multisection parameter. Layout as this
// package reads J1587 PID 192: the sectioned PID, this section's number
// (the first is 0), the last section's number, then the section's bytes.
// The first section's bytes begin with the sectioned parameter's own length
// byte, so the joined sections are that parameter's encoding after its PID.
type Section struct {
	PID   uint16 // page 1 only: PID 192 carries one byte
	Index uint8
	Last  uint8
	Data  []byte // aliases the message
}

// multiHeader is PID, section number, last section number.
const multiHeader = 3

// ParseSection reads a PID 192 value (length byte already removed).
func ParseSection(data []byte) (Section, error) {
	if len(data) < multiHeader {
		return Section{}, ErrTruncated
	}
	s := Section{PID: uint16(data[0]), Index: data[1], Last: data[2], Data: data[multiHeader:]}
	if s.Index > s.Last {
		return Section{}, ErrTruncated
	}
	return s, nil
}
