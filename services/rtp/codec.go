package rtp

import (
	"strconv"
	"strings"

	"fieldtap/services/sdp"
)

// maxPT is the largest RTP payload type (a 7-bit field, RFC 3550 §5.1).
const maxPT = 127

// Codec is a payload type's encoding name. A name the box's own tables
// know (sdp.KnownEncoding: the RFC 3551 static types and the well-known
// dynamic encodings) is the box's vocabulary, upper-cased as the table
// spells it; so is "PT<n>", the box's label for a payload type nothing
// names. Any other name came only from an SDP body: the sender wrote it,
// and an answer that shows it fences it.
type Codec string

// Own returns c as the box's own name, and whether it is one.
func (c Codec) Own() (string, bool) {
	if name, ok := sdp.KnownEncoding(string(c)); ok {
		return name, true
	}
	if n, ok := strings.CutPrefix(string(c), "PT"); ok {
		if pt, err := strconv.Atoi(n); err == nil && pt >= 0 && pt <= maxPT && strconv.Itoa(pt) == n {
			return string(c), true
		}
	}
	return "", false
}
