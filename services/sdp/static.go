package sdp

import "strings"

// StaticFormat is an RFC 3551 §6 static payload type.
type StaticFormat struct {
	Encoding  string
	ClockRate int
}

// static lists the audio types of RFC 3551 Table 4 that phones still send,
// plus CN (RFC 3389).
var static = map[int]StaticFormat{
	0:  {"PCMU", 8000},
	3:  {"GSM", 8000},
	4:  {"G723", 8000},
	8:  {"PCMA", 8000},
	9:  {"G722", 8000}, // RTP clock is 8000 although sampled at 16 kHz (RFC 3551 §4.5.2)
	13: {"CN", 8000},
	18: {"G729", 8000},
}

// staticByPT is static indexed by payload type: every format of every
// m= line is looked up, and an index is cheaper than a map.
var staticByPT = func() (t [19]StaticFormat) {
	for pt, f := range static {
		t[pt] = f
	}
	return t
}()

// Static returns the RFC 3551 static format for pt.
func Static(pt int) (StaticFormat, bool) {
	if pt < 0 || pt >= len(staticByPT) || staticByPT[pt].Encoding == "" {
		return StaticFormat{}, false
	}
	return staticByPT[pt], true
}

// Dynamic clock rates by encoding name, for a dynamic payload type whose
// rtpmap was lost or never seen (RFC 4733, RFC 7587).
var dynamicClock = map[string]int{
	"telephone-event": 8000,
	"opus":            48000,
	"g722":            8000,
	"amr":             8000,
	"amr-wb":          16000,
	"ilbc":            8000,
	"speex":           8000,
}

// ClockRate returns f's RTP clock rate: the rtpmap's, else the static
// table's, else the encoding's well-known rate, else 0 (unknown).
func ClockRate(f Format) int {
	if f.ClockRate > 0 {
		return f.ClockRate
	}
	if st, ok := Static(f.PT); ok {
		return st.ClockRate
	}
	return dynamicClock[strings.ToLower(f.Encoding)]
}

// KnownEncoding reports whether name (compared without case, as RFC 4855
// compares media subtypes) is an encoding this package's own tables know:
// an RFC 3551 static type or a well-known dynamic one. It returns the name
// upper-cased, so an answer that shows it writes the box's spelling, not
// the sender's, and everything else an SDP names stays the sender's text.
func KnownEncoding(name string) (string, bool) {
	for _, f := range static {
		if strings.EqualFold(f.Encoding, name) {
			return f.Encoding, true
		}
	}
	if _, ok := dynamicClock[strings.ToLower(name)]; ok {
		return strings.ToUpper(name), true
	}
	return "", false
}

// IsTelephoneEvent reports whether f carries RFC 4733 events.
func IsTelephoneEvent(f Format) bool { return strings.EqualFold(f.Encoding, "telephone-event") }
