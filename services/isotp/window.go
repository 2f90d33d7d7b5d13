package isotp

import (
	"slices"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// Bounds of one trace answer. The counters beside the lists are always
// whole; the lists say when they were cut.
const (
	// MaxTraceTransactions bounds the transactions one trace returns
	// (about 1 kB each as JSON): a 100 000-frame ring of pure diagnostics
	// holds at most ~50 000, a real session a few hundred.
	MaxTraceTransactions = 5000
	// MaxTraceIncomplete bounds the incomplete transfers listed.
	MaxTraceIncomplete = 1000
)

// Window selects frames by time: Since inclusive, Until exclusive; a zero
// bound is open.
type Window struct {
	Since, Until time.Time
}

// Contains reports whether t is inside w.
func (w Window) Contains(t time.Time) bool {
	return (w.Since.IsZero() || !t.Before(w.Since)) && (w.Until.IsZero() || t.Before(w.Until))
}

// IncompleteRow is one incomplete transfer as a trace shows it.
type IncompleteRow struct {
	Seq        uint64 // the transfer's first frame
	CANID      string
	Addressing string
	Reason     Reason
	Start      time.Time
	End        time.Time
	Frames     int
	Announced  int
	Received   int
	// Expected and Got are the sequence numbers of a "sequence" end.
	Expected *int
	Got      *int
}

// TransportSummary is the ISO-TP layer of a trace.
type TransportSummary struct {
	Counters
	IncompleteByReason map[string]uint64
}

// ServiceCount is one service's tally in a trace.
type ServiceCount struct {
	SID        uint8
	Name       string
	Requests   int
	Positive   int
	Negative   int
	NoResponse int
}

// Trace is what TraceFrames found in a window.
type Trace struct {
	Port string
	// Frames is how many stored frames the window held; FirstSeq the
	// oldest stored (frames before it were evicted by the ring's bounds).
	Frames    int
	FirstSeq  uint64
	Transport TransportSummary
	UDS       TraceCounters
	Services  []ServiceCount
	// Transactions are in order of their first frame.
	Transactions          []Transaction
	TransactionsTruncated bool
	Incomplete            []IncompleteRow
	IncompleteTruncated   bool
	// RejectedChannels counts the channels not taken for diagnostic ones,
	// by reason; Rejections lists them. Their transactions are not in
	// Transactions (UDS.Rejected counts them).
	RejectedChannels map[string]uint64
	Rejections       []Rejection
}

// TraceFrames runs a fresh tracer over the stored frames of one port in w
// and returns every transaction and incomplete transfer it found; those
// still open when the window ends are reported open_at_end. A channel
// that took part in no answered exchange in w is rejected as unpaired,
// and its transactions are counted, not listed.
func TraceFrames(port string, snap ring.Snapshot[canbus.Record], w Window, o Options) (Trace, error) {
	tr, err := NewTracer(o)
	if err != nil {
		return Trace{}, err
	}
	out := Trace{Port: port, FirstSeq: snap.FirstSeq(), Transactions: []Transaction{}, Incomplete: []IncompleteRow{}, Services: []ServiceCount{}}
	tr.OnTransaction = func(tx *Transaction) {
		if len(out.Transactions) == MaxTraceTransactions {
			out.TransactionsTruncated = true
			return
		}
		out.Transactions = append(out.Transactions, *tx)
	}
	tr.Observer().OnIncomplete = func(in Incomplete) {
		if len(out.Incomplete) == MaxTraceIncomplete {
			out.IncompleteTruncated = true
			return
		}
		out.Incomplete = append(out.Incomplete, incompleteRow(in))
	}
	var last time.Time
	var rec canbus.Record // one reused copy: the payload slice would make each frame escape
	snap.Range(snap.FirstSeq(), func(seq uint64, r canbus.Record) bool {
		if !w.Contains(r.Time) {
			return true
		}
		out.Frames++
		last = r.Time
		if r.ID&(wire.CANRTR|wire.CANERR) == 0 {
			rec = r
			tr.Feed(seq, r.Time, r.ID, rec.Payload())
		}
		return true
	})
	end := w.Until
	if end.IsZero() {
		end = last
	}
	tr.Flush(end)
	out.Transport = TransportSummary{Counters: tr.Observer().Counters(), IncompleteByReason: tr.Observer().Counters().IncompleteByReason()}
	out.UDS = tr.Counters()
	out.Rejections = tr.Rejections()
	out.RejectedChannels = RejectedByReason(out.Rejections)
	slices.SortStableFunc(out.Transactions, func(a, b Transaction) int { return cmpSeq(a.ID, b.ID) })
	out.Services = serviceCounts(out.Transactions)
	return out, nil
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func incompleteRow(in Incomplete) IncompleteRow {
	r := IncompleteRow{Seq: in.FirstSeq, CANID: wire.FormatCANID(in.Channel.ID), Addressing: in.Channel.Addressing.String(),
		Reason: in.Reason, Start: in.Start, End: in.End, Frames: in.Frames, Announced: in.Announced, Received: in.Received}
	if in.Reason == ReasonSequence {
		e, g := in.Expected, in.Got
		r.Expected, r.Got = &e, &g
	}
	return r
}

// serviceCounts tallies transactions with a request by service.
func serviceCounts(txs []Transaction) []ServiceCount {
	by := map[uint8]*ServiceCount{}
	for _, tx := range txs {
		if tx.Request == nil {
			continue
		}
		c := by[tx.SID]
		if c == nil {
			c = &ServiceCount{SID: tx.SID, Name: tx.Service}
			by[tx.SID] = c
		}
		c.Requests++
		switch tx.Status {
		case StatusPositive:
			c.Positive++
		case StatusNegative:
			c.Negative++
		case StatusNoResponse:
			c.NoResponse++
		}
	}
	out := make([]ServiceCount, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ServiceCount) int { return int(a.SID) - int(b.SID) })
	return out
}
