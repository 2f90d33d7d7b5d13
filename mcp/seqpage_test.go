package mcp

import (
	"testing"

	"fieldtap/services/ring"
)

// TestSeqPageWalksEveryMatchOnce pages through even numbers three at a
// time: every page counts all matches, and the pages together hold each
// match exactly once, in order.
func TestSeqPageWalksEveryMatchOnce(t *testing.T) {
	r, _ := ring.New[int](ring.Limits{Items: 100, Bytes: 100}, nil)
	for i := range 20 {
		r.Append(i)
	}
	src := SourceInfo{CaptureIdentity: "t"}
	even := func(v int) bool { return v%2 == 0 }
	var got []int
	var from uint64
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		rows, page := seqPage(src, r.Snapshot(), from, 3, even, func(_ uint64, v int) int { return v })
		if page.TotalMatched != 10 || page.Returned != len(rows) {
			t.Fatalf("page %+v with %d rows", page, len(rows))
		}
		got = append(got, rows...)
		if !page.Truncated {
			break
		}
		var err error
		if from, err = canParseCursor(src, page.NextCursor); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 10 {
		t.Fatalf("walked %v", got)
	}
	for i, v := range got {
		if v != 2*i {
			t.Fatalf("walked %v, want the even numbers in order", got)
		}
	}
}
