package recorder

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Segment file names: PREFIX_NNNNN_YYYYMMDDhhmmss.pcapng (UTC), the
// pattern Wireshark's File Set dialog groups (fileset.c: five digits,
// fourteen digits, one suffix). NNNNN is the sequence number modulo
// nameSeqModulo; the index keeps the whole number.
const (
	segmentExt    = ".pcapng"
	indexExt      = ".idx" // NAME.pcapng.idx: its last suffix differs, so no file set takes it
	tmpExt        = ".tmp"
	nameTime      = "20060102150405"
	nameSeqModulo = 100000
	gapsFile      = "gaps.json"
	pinsFile      = "pins.json"
	marksFile     = "marks.json"
	lockFile      = ".lock"
)

var segmentRE = regexp.MustCompile(`^([A-Za-z0-9.-]+)_(\d{5})_(\d{14})\.pcapng$`)

func segmentName(prefix string, seq uint64, created time.Time) string {
	return fmt.Sprintf("%s_%05d_%s%s", prefix, seq%nameSeqModulo, created.UTC().Format(nameTime), segmentExt)
}

// parseSegmentName returns the sequence digits and time of a segment
// file of this prefix.
func parseSegmentName(prefix, name string) (seq uint64, created time.Time, ok bool) {
	m := segmentRE.FindStringSubmatch(name)
	if m == nil || m[1] != prefix {
		return 0, time.Time{}, false
	}
	n, err := strconv.ParseUint(m[2], 10, 64)
	if err != nil {
		return 0, time.Time{}, false
	}
	t, err := time.Parse(nameTime, m[3])
	if err != nil {
		return 0, time.Time{}, false
	}
	return n, t, true
}
