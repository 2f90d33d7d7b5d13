package transmit

import (
	"context"
	"testing"
	"time"
)

// BenchmarkConfirmationRoundTrip is one question issued and its accept
// redeemed: the HMAC-SHA256 signing, the state written and parsed, the
// MAC checked twice (the call's and the table's), the table bounds.
func BenchmarkConfirmationRoundTrip(b *testing.B) {
	r := openRig(b)
	s, _ := New(r.o)
	c := httpCaller("tech", "s")
	p, _ := s.Plan(context.Background(), c, r.spec)
	sub := Subject{Owner: c.Owner(), PlanID: p.ID, Tool: "can_send", ArgsDigest: "d"}
	b.ReportAllocs()
	for b.Loop() {
		q, ref := s.issue(context.Background(), c, p, sub, time.Now())
		if ref != nil {
			b.Fatal(ref)
		}
		if _, ref := s.redeem(sub, q.State, ReplyAccept, time.Now()); ref != nil {
			b.Fatal(ref)
		}
	}
}

// BenchmarkScanTail is start-up reading a full tail window of audit
// records (auditTailBytes of one-frame plans, each planned, sending, sent).
func BenchmarkScanTail(b *testing.B) {
	var tail []byte
	for i := 0; len(tail) < auditTailBytes; i++ {
		id := newID(planPrefix)
		tail = append(tail, auditLines(b, Record{Event: EventPlanned, PlanID: id}, sending(id, t0), Record{Event: EventSent, PlanID: id})...)
	}
	b.SetBytes(int64(len(tail)))
	b.ReportAllocs()
	for b.Loop() {
		if t := ScanTail(tail, true); len(t.Interrupted) > 1 {
			b.Fatal(t.Interrupted)
		}
	}
}
