package sip

import (
	"fmt"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"
)

// ladder is one answered call of about 700-byte messages, as the
// generator and real phones send them.
func ladder(i int) []string {
	id := fmt.Sprintf("%016x%016x@192.0.2.%d", i*7919, i*104729, i%250)
	pad := "X-Pad: " + strings.Repeat("p", 380) + "\r\n"
	head := func(start, method string, cseq int, toTag string) string {
		return start + "\r\n" +
			fmt.Sprintf("Via: SIP/2.0/UDP 192.0.2.%d:5060;branch=z9hG4bK%08x%d\r\n", i%250, i, cseq) +
			fmt.Sprintf("From: \"Phone %d\" <sip:%d@192.0.2.1>;tag=%08x\r\n", 1000+i%500, 1000+i%500, i) +
			"To: <sip:2002@198.51.100.7>" + toTag + "\r\n" +
			"Call-ID: " + id + "\r\n" +
			fmt.Sprintf("CSeq: %d %s\r\n", cseq, method) +
			"User-Agent: fieldtap-gen/1\r\n" + pad + "Content-Length: 0\r\n\r\n"
	}
	return []string{
		head("INVITE sip:2002@198.51.100.7 SIP/2.0", "INVITE", 1, ""),
		head("SIP/2.0 100 Trying", "INVITE", 1, ""),
		head("SIP/2.0 180 Ringing", "INVITE", 1, ";tag=b"),
		head("SIP/2.0 200 OK", "INVITE", 1, ";tag=b"),
		head("ACK sip:2002@198.51.100.7 SIP/2.0", "ACK", 1, ";tag=b"),
		head("BYE sip:2002@198.51.100.7 SIP/2.0", "BYE", 2, ";tag=b"),
		head("SIP/2.0 200 OK", "BYE", 2, ";tag=b"),
	}
}

func fillCalls(tb testing.TB, st *Store, calls int) {
	var m Parsed
	src, dst := netip.MustParseAddrPort("192.0.2.1:5060"), netip.MustParseAddrPort("198.51.100.7:5060")
	t0 := time.Unix(1_700_000_000, 0)
	for i := range calls {
		for j, raw := range ladder(i) {
			if err := m.Parse([]byte(raw)); err != nil {
				tb.Fatal(err)
			}
			st.Add(Meta{Time: t0.Add(time.Duration(i*10+j) * time.Millisecond), Src: src, Dst: dst, Transport: TransportUDP}, &m, []byte(raw))
		}
	}
}

// TestAccountedBytesMatchTheHeap fills a store with whole calls and
// compares what it accounts for dialogs and messages with the heap's
// growth: the bounds are meant in real memory, structures included.
func TestAccountedBytesMatchTheHeap(t *testing.T) {
	const calls = 20_000
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st := newStore(t, Limits{DialogBytes: 1 << 30, MessageBytes: 1 << 30})
	fillCalls(t, st, calls)
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc - before.HeapAlloc)
	d, m := st.DialogStats(), st.MessageStats()
	acct := float64(d.Bytes + m.Bytes)
	t.Logf("%d dialogs: %d bytes (%d each); %d messages: %d bytes (%d each); heap grew %.0f (accounted %.1f%%)",
		d.Items, d.Bytes, d.Bytes/int64(d.Items), m.Items, m.Bytes, m.Bytes/int64(m.Items), heap, 100*acct/heap)
	if acct < heap*0.93 || acct > heap*1.10 {
		t.Errorf("store accounts %.0f bytes, the heap grew %.0f", acct, heap)
	}
	runtime.KeepAlive(st)
}

// TestByteBoundsEvict fills a store past both byte bounds: it keeps the
// newest, counts what it dropped, and stays within the bounds.
func TestByteBoundsEvict(t *testing.T) {
	lim := Limits{DialogBytes: 200 << 10, MessageBytes: 400 << 10}
	st := newStore(t, lim)
	fillCalls(t, st, 2000)
	d, m := st.DialogStats(), st.MessageStats()
	if d.Bytes > lim.DialogBytes || m.Bytes > lim.MessageBytes {
		t.Errorf("held %d dialog and %d message bytes, bounds %d and %d", d.Bytes, m.Bytes, lim.DialogBytes, lim.MessageBytes)
	}
	sn := st.Snapshot()
	if sn.Stats.DialogsEvicted == 0 || sn.Stats.MessagesEvicted == 0 || sn.Stats.DialogsEvicted+uint64(len(sn.Dialogs)) != 2000 {
		t.Errorf("evicted %d dialogs (%d kept) and %d messages: want evictions counted, kept + evicted = 2000",
			sn.Stats.DialogsEvicted, len(sn.Dialogs), sn.Stats.MessagesEvicted)
	}
	if last := sn.Dialogs[len(sn.Dialogs)-1]; last.MessagesKept != 7 || len(last.Messages()) != 7 {
		t.Errorf("newest dialog keeps %d messages, want its 7", last.MessagesKept)
	}
	// An evicted Call-ID seen again starts a new dialog, not a lost one.
	fillCalls(t, st, 1)
	if sn := st.Snapshot(); sn.Lookup(sn.Dialogs[len(sn.Dialogs)-1].CallID) == nil {
		t.Error("a re-seen Call-ID is not findable")
	}
}

// TestSnapshotDialogsNeverChange takes a snapshot, keeps adding to the
// same dialog, and checks the snapshot's *Dialog still shows what it did.
func TestSnapshotDialogsNeverChange(t *testing.T) {
	st := newStore(t, Limits{})
	calls := ladder(1)
	var m Parsed
	add := func(raw string) {
		if err := m.Parse([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		st.Add(Meta{Time: time.Unix(1, 0), Transport: TransportUDP}, &m, []byte(raw))
	}
	add(calls[0])
	add(calls[1])
	before := st.Snapshot().Dialogs[0]
	kept, state := before.MessagesKept, before.State
	for _, raw := range calls[2:] {
		add(raw)
	}
	if before.MessagesKept != kept || before.State != state || len(before.Messages()) != kept {
		t.Errorf("snapshot dialog changed under its reader: %d messages, state %s; was %d, %s", before.MessagesKept, before.State, kept, state)
	}
	if now := st.Snapshot().Dialogs[0]; now.MessagesKept != 7 || now.State != StateEnded {
		t.Errorf("current dialog: %d messages, state %s", now.MessagesKept, now.State)
	}
}

// parsedLadders is n distinct calls (ladder), each message's raw bytes
// and its parse, which borrows them.
func parsedLadders(tb testing.TB, n int) ([][]Parsed, [][][]byte) {
	tb.Helper()
	calls, raws := make([][]Parsed, n), make([][][]byte, n)
	for i := range calls {
		for _, raw := range ladder(i) {
			raws[i] = append(raws[i], []byte(raw))
		}
		calls[i] = make([]Parsed, len(raws[i]))
		for j := range raws[i] {
			if err := calls[i][j].Parse(raws[i][j]); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return calls, raws
}

// BenchmarkStoreAdd adds whole calls; each Call-ID comes back only after
// its dialog was evicted, so every call is a new dialog, as on a wire.
func BenchmarkStoreAdd(b *testing.B) {
	const distinct = 4096
	st, _ := New(Limits{Dialogs: distinct / 4})
	calls, raws := parsedLadders(b, distinct)
	meta := Meta{Time: time.Unix(1, 0), Transport: TransportUDP}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := i / 7 % distinct
		st.Add(meta, &calls[c][i%7], raws[c][i%7])
	}
}

// TestCallsGrowIntoSpareArrays: once the store evicts, a call's word
// lists (messages, retransmission keys, transactions) and transactions
// grow into arrays evicted dialogs gave back, and its participants,
// methods and To tag stay in the Dialog's own arrays: an answered call
// of seven messages allocates its identity string, its To tag and its
// three transactions' branches, not the arrays its lists grow through
// (sixteen allocations a call before: BenchmarkStoreAdd's 2 a message).
func TestCallsGrowIntoSpareArrays(t *testing.T) {
	st := newStore(t, Limits{Dialogs: 16})
	const warm, runs = 48, 20
	calls, raws := parsedLadders(t, warm+runs+1)
	meta := Meta{Time: time.Unix(1, 0), Transport: TransportUDP}
	next := 0
	add := func() {
		for j := range calls[next] {
			st.Add(meta, &calls[next][j], raws[next][j])
		}
		next++
	}
	for range warm {
		add()
	}
	got := testing.AllocsPerRun(runs, add)
	t.Logf("%.1f allocations a call", got)
	if got > 6 {
		t.Errorf("an answered call allocates %.1f times, want at most 6", got)
	}
}
