package board

import (
	"fmt"
	"strconv"
	"strings"

	"periph.io/x/conn/v3/gpio"
)

// Line names one GPIO line: a chip (gpiochipN or its label) and the
// line's offset on that chip, which is not a header pin number.
type Line struct {
	Chip   string
	Offset int
}

func (l Line) String() string { return fmt.Sprintf("%s:%d", l.Chip, l.Offset) }

// maxLineOffset bounds an offset: the largest chips (Raspberry Pi 5's RP1,
// TI's wide banks) have well under this many lines.
const maxLineOffset = 511

// ParseLine parses "CHIP:OFFSET".
func ParseLine(s string) (Line, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return Line{}, fmt.Errorf("line %q: want CHIP:OFFSET", s)
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 || n > maxLineOffset {
		return Line{}, fmt.Errorf("line %q: offset: want 0 to %d", s, maxLineOffset)
	}
	return Line{Chip: s[:i], Offset: n}, nil
}

func pullOf(s string) (gpio.Pull, error) {
	switch s {
	case "", "up":
		return gpio.PullUp, nil
	case "down":
		return gpio.PullDown, nil
	case "none":
		return gpio.PullNoChange, nil
	}
	return gpio.PullNoChange, fmt.Errorf("%q: want up, down or none", s)
}
