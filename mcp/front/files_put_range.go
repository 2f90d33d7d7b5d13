package front

import (
	"fmt"
	"strconv"
	"strings"
)

// maxRangeValue bounds every number of a Content-Range: past 2^53 a
// JSON reader of the answers (and of the MCP upload tools' offsets)
// loses digits, and no file on the box comes near it.
const maxRangeValue = 1 << 53

// byteRange is a request's Content-Range: the bytes first..last
// (inclusive) of a file of total bytes.
type byteRange struct {
	first, last, total int64
}

// parseContentRange reads "bytes FIRST-LAST/TOTAL" (RFC 9110 §14.4): the
// unit case-insensitive, decimal digits only, first <= last < total. The
// forms a response uses for an unknown or unsatisfied range ("*") name
// no bytes a request could carry and are refused.
func parseContentRange(h string) (byteRange, error) {
	unit, spec, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(unit, "bytes") {
		return byteRange{}, fmt.Errorf("Content-Range %q: want bytes FIRST-LAST/TOTAL", h)
	}
	span, total, ok := strings.Cut(spec, "/")
	if !ok {
		return byteRange{}, fmt.Errorf("Content-Range %q: no /TOTAL", h)
	}
	first, last, ok := strings.Cut(span, "-")
	if !ok {
		return byteRange{}, fmt.Errorf("Content-Range %q: want FIRST-LAST before the /", h)
	}
	var r byteRange
	for _, f := range []struct {
		name, text string
		v          *int64
	}{{"first", first, &r.first}, {"last", last, &r.last}, {"total", total, &r.total}} {
		n, err := rangeNumber(f.text)
		if err != nil {
			return byteRange{}, fmt.Errorf("Content-Range %q: %s %v", h, f.name, err)
		}
		*f.v = n
	}
	switch {
	case r.first > r.last:
		return byteRange{}, fmt.Errorf("Content-Range %q: first byte %d after last byte %d", h, r.first, r.last)
	case r.last >= r.total:
		return byteRange{}, fmt.Errorf("Content-Range %q: last byte %d is not inside the %d bytes of the file", h, r.last, r.total)
	}
	return r, nil
}

// rangeNumber is a run of 1 to 16 decimal digits at most maxRangeValue;
// strconv alone would take a sign, an underscore or a 0x prefix.
func rangeNumber(s string) (int64, error) {
	if s == "" || len(s) > 16 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q: want 1 to 16 decimal digits", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxRangeValue {
		return 0, fmt.Errorf("%q: at most %d", s, int64(maxRangeValue))
	}
	return n, nil
}

// length is how many bytes the range holds.
func (r byteRange) length() int64 { return r.last - r.first + 1 }
