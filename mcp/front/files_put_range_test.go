package front

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseContentRange(t *testing.T) {
	good := map[string]byteRange{
		"bytes 0-0/1":       {0, 0, 1},
		"bytes 0-99/200":    {0, 99, 200},
		"bytes 100-199/200": {100, 199, 200},
		"BYTES 7-7/8":       {7, 7, 8},
		"bytes 0-9007199254740991/9007199254740992": {0, 1<<53 - 1, 1 << 53},
	}
	for h, want := range good {
		if got, err := parseContentRange(h); err != nil || got != want {
			t.Errorf("%q = %+v, %v; want %+v", h, got, err, want)
		}
	}
	bad := map[string]string{
		"":                            "want bytes",
		"bytes":                       "want bytes",
		"items 0-1/2":                 "want bytes",
		"bytes 0-1":                   "no /TOTAL",
		"bytes 5/10":                  "FIRST-LAST",
		"bytes */10":                  "FIRST-LAST",
		"bytes 0-1/*":                 "total",
		"bytes 2-1/10":                "after last byte",
		"bytes 0-10/10":               "not inside",
		"bytes -1-5/10":               "first",
		"bytes +1-5/10":               "first",
		"bytes 0x1-5/10":              "first",
		"bytes 1_0-20/30":             "first",
		"bytes  0-1/2":                "first",
		"bytes 0-1/2 ":                "total",
		"bytes 0-1/99999999999999999": "total",
		"bytes 0-1/9007199254740993":  "at most",
	}
	for h, says := range bad {
		if _, err := parseContentRange(h); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v, want an error naming %q", h, err, says)
		}
	}
}

// FuzzContentRange: any header parses to a range inside its file whose
// canonical form parses back to itself, or is refused naming the header.
func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-99/200", "bytes 100-199/200", "BYTES 7-7/8", "bytes */10", "bytes 0-1", "bytes 2-1/10",
		"bytes -1-5/10", "bytes 0x1-5/10", "bytes 0-9007199254740991/9007199254740992", "bytes 0-1/99999999999999999", "bytes 0-0/1\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r, err := parseContentRange(h)
		if err != nil {
			if !strings.Contains(err.Error(), "Content-Range") {
				t.Fatalf("%q: error %v does not name the header", h, err)
			}
			return
		}
		if r.first < 0 || r.first > r.last || r.last >= r.total || r.total > maxRangeValue || r.length() < 1 {
			t.Fatalf("%q parsed to %+v", h, r)
		}
		again, err := parseContentRange(fmt.Sprintf("bytes %d-%d/%d", r.first, r.last, r.total))
		if err != nil || again != r {
			t.Fatalf("%q: %+v does not round-trip: %+v, %v", h, r, again, err)
		}
	})
}
