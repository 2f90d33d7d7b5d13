package canfiles

import "bytes"

// Format is a vendor log kind.
type Format string

// The kinds Sniff and SniffLine tell apart.
const (
	ASC       Format = "asc"
	BLF       Format = "blf"
	TRC       Format = "trc"
	SavvyCSV  Format = "savvycan_csv"
	NotVendor Format = ""
)

// Sniff says whether a file's first bytes are BLF's file signature.
func Sniff(head []byte) Format {
	if bytes.HasPrefix(head, []byte(blfFileMagic)) {
		return BLF
	}
	return NotVendor
}

// SniffLine says which text log a leading line (trimmed, not blank)
// starts: ASC's date or base line, TRC's ;$FILEVERSION line or a TRC 1.0
// message line ("1)  1841  0001  8  …"), SavvyCAN's CSV header. Comment
// lines (ASC's //, TRC's other ; lines) are NotVendor: the caller reads
// on.
func SniffLine(line []byte) Format {
	lower := bytes.ToLower(line)
	switch {
	case bytes.HasPrefix(lower, []byte("date ")), bytes.HasPrefix(lower, []byte("base hex")), bytes.HasPrefix(lower, []byte("base dec")):
		return ASC
	case bytes.HasPrefix(line, []byte(";$FILEVERSION=")):
		return TRC
	case bytes.HasPrefix(line, []byte("Time Stamp,ID,Extended,")):
		return SavvyCSV
	}
	var t trcReader
	t.version = 10
	if ok, err := t.line(line); ok && err == nil {
		return TRC
	}
	return NotVendor
}
