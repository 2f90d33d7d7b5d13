package sip

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestSharedTexts: a repeated value is one string, a long one is never
// kept, and the table stops growing at its bound while still answering.
func TestSharedTexts(t *testing.T) {
	ts := sharedTexts{m: map[string]string{}}
	a, b := ts.get([]byte("Ringing")), ts.get([]byte("Ringing"))
	if a != "Ringing" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("a repeated value was copied again: %q %q", a, b)
	}
	long := strings.Repeat("u", maxSharedText+1)
	if got := ts.get([]byte(long)); got != long || len(ts.m) != 1 {
		t.Errorf("a %d-byte value: got %d bytes back, table holds %d", len(long), len(got), len(ts.m))
	}
	for i := range 2 * maxSharedTexts {
		if v := "ua/" + strconv.Itoa(i); ts.get([]byte(v)) != v {
			t.Fatalf("value %q not returned", v)
		}
	}
	if len(ts.m) != maxSharedTexts {
		t.Errorf("table holds %d values, bound %d", len(ts.m), maxSharedTexts)
	}
	if ts.get(nil) != "" {
		t.Error("an empty value is not empty")
	}
}
