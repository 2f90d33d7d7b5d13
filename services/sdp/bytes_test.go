package sdp

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// maximalBody is a body of MaxBody bytes that Parse keeps as much of as
// it can: sections of MaxFormats dynamic formats, each with a rtpmap
// and a fmtp past maxValue bytes, and MaxCrypto keys a section, all of
// them texts Parse copies.
func maximalBody(seed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "v=0\r\no=u%d %d 1 IN IP4 192.0.2.1\r\nc=IN IP4 192.0.2.1\r\n", seed, seed)
	for m := range MaxMedia {
		fmt.Fprintf(&b, "m=x%dmedia%d %d RTP/X%d", m, seed, 4000+2*m, seed)
		for pt := range MaxFormats {
			fmt.Fprintf(&b, " %d", 96+pt)
		}
		b.WriteString("\r\n")
		for pt := range MaxFormats {
			fmt.Fprintf(&b, "a=rtpmap:%d enc%d-%d/8000\r\n", 96+pt, seed, pt)
			fmt.Fprintf(&b, "a=fmtp:%d %s\r\n", 96+pt, strings.Repeat(string(rune('a'+pt%26)), maxValue+1))
		}
		for k := range MaxCrypto {
			fmt.Fprintf(&b, "a=crypto:%d AES_CM_128_HMAC_SHA1_80 inline:%s\r\n", k+1, strings.Repeat("K", 40))
		}
	}
	return b.String()[:MaxBody]
}

// TestSessionBytesHoldsTheHeap: what Bytes charges for parsed sessions
// kept alive is at least what they grew the heap by, and not far above,
// for a phone's offer, an SRTP offer of three sections and a body at
// every bound of Parse (up to MaxBody, about 16 KiB, of which Parse keeps
// most). The charge is exact to a few bytes a session, so the heap may
// pass it by slack only: what the runtime itself allocates while the
// test measures, and under the race detector 3 % more.
func TestSessionBytesHoldsTheHeap(t *testing.T) {
	cases := []struct {
		name string
		body func(i int) string
		n    int
	}{
		{"phone", func(i int) string { return strings.Replace(offer, "2890844526 2890844526", fmt.Sprint(i, " ", i), 1) }, 4000},
		{"srtp", func(int) string { return srtpOffer }, 4000},
		{"maximal", maximalBody, 1000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bodies := make([][]byte, tc.n)
			for i := range bodies {
				bodies[i] = []byte(tc.body(i))
			}
			kept := make([]*Session, tc.n)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(&before)
			for i, b := range bodies {
				s, err := Parse(b)
				if err != nil {
					t.Fatal(err)
				}
				kept[i] = s
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			charged := 0.0
			for _, s := range kept {
				charged += float64(s.Bytes())
			}
			runtime.KeepAlive(bodies)
			t.Logf("%d sessions of %d body bytes, %d sections: heap grew %.0f bytes, charged %.0f (%.0f a session)",
				tc.n, len(bodies[0]), len(kept[0].Media), heap, charged, charged/float64(tc.n))
			slack := float64(16 << 10)
			if raceDetector {
				slack += 0.03 * charged
			}
			if heap > charged+slack || heap < charged*0.8 {
				t.Errorf("charged %.0f bytes for %.0f of heap: not within 0.8–1.0 of the charge", charged, heap)
			}
		})
	}
}
