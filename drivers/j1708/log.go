package j1708

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// MaxMessage is the longest J1708 message, MID and checksum included
// (SAE J1708 §5.2 limit at the normal priority).
const MaxMessage = 21

// maxLogLine bounds one log line: a timestamp, a tag and 21 bytes in hex.
const maxLogLine = 256

// LogLine is one parsed log line.
type LogLine struct {
	Time  time.Time // seconds from the log's origin, on the Unix epoch
	J2497 bool
	Data  []byte // MID, data, checksum
}

// ParseLogLine parses `(1.688000) j1708 80020028…`.
func ParseLogLine(b []byte) (LogLine, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '(' {
		return LogLine{}, errors.New("missing (timestamp)")
	}
	end := bytes.IndexByte(b, ')')
	if end < 0 {
		return LogLine{}, errors.New("unterminated (timestamp)")
	}
	secs, err := strconv.ParseFloat(string(b[1:end]), 64)
	if err != nil || secs < 0 || secs > 1e12 {
		return LogLine{}, fmt.Errorf("timestamp %q is not seconds", b[1:end])
	}
	fields := bytes.Fields(b[end+1:])
	if len(fields) != 2 {
		return LogLine{}, errors.New("want `(time) j1708 HEX`")
	}
	var l LogLine
	switch string(fields[0]) {
	case "j1708":
	case "j2497":
		l.J2497 = true
	default:
		return LogLine{}, fmt.Errorf("tag %q: want j1708 or j2497", fields[0])
	}
	h := fields[1]
	if len(h)%2 != 0 || len(h)/2 < 2 || len(h)/2 > MaxMessage {
		return LogLine{}, fmt.Errorf("message %q: want 2 to %d bytes of hex", h, MaxMessage)
	}
	l.Data = make([]byte, len(h)/2)
	if _, err := hex.Decode(l.Data, h); err != nil {
		return LogLine{}, fmt.Errorf("message %q is not hex", h)
	}
	sec, frac := int64(secs), secs-float64(int64(secs))
	l.Time = time.Unix(sec, int64(frac*1e9+0.5)).UTC().Round(time.Microsecond)
	return l, nil
}

// Checksum reports whether msg's bytes sum to 0 mod 256.
func Checksum(msg []byte) bool {
	var s byte
	for _, b := range msg {
		s += b
	}
	return s == 0
}
