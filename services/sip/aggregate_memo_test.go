package sip

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldtap/services/filter"
)

// scanAggregate is Aggregate as it was before the keyer: a string per
// dialog from DimensionValues, counted in a map.
func scanAggregate(ds []*Dialog, match func(*Dialog) bool, dim string, maxBuckets int) Aggregation {
	counts := map[string]int{}
	out := Aggregation{Multi: MultiDimension(dim)}
	for _, d := range ds {
		if match(d) {
			vs, _ := d.DimensionValues(dim)
			for _, v := range vs {
				counts[v]++
			}
			out.TotalMatched++
		}
	}
	out.Buckets = []Bucket{}
	for v, n := range counts {
		out.Buckets = append(out.Buckets, Bucket{Value: v, Count: n})
	}
	slices.SortFunc(out.Buckets, func(a, b Bucket) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value)) })
	if len(out.Buckets) > maxBuckets {
		for _, b := range out.Buckets[maxBuckets:] {
			out.OtherCount += b.Count
		}
		out.OtherBuckets = len(out.Buckets) - maxBuckets
		out.Buckets = out.Buckets[:maxBuckets]
	}
	return out
}

// scanAdd is MetricsAcc.Add without the memo: every attempt folded
// afresh.
func scanAdd(a *MetricsAcc, d *Dialog) {
	a.dialogs++
	for _, at := range d.Attempts() {
		var f figures
		if p, ok := f.fold(&at); ok {
			a.pdd = append(a.pdd, p)
		}
		a.add(&f)
	}
}

// scanGroups is GroupMetrics as it was before the keyer and the memo:
// strings per dialog, attempts folded on every call, the rest measured
// by a second scan.
func scanGroups(ds []*Dialog, match func(*Dialog) bool, dim string, maxGroups int) Grouping {
	accs := map[string]*MetricsAcc{}
	var all MetricsAcc
	out := Grouping{Multi: MultiDimension(dim)}
	for _, d := range ds {
		if !match(d) {
			continue
		}
		vs, _ := d.DimensionValues(dim)
		for _, v := range vs {
			if accs[v] == nil {
				accs[v] = &MetricsAcc{}
			}
			scanAdd(accs[v], d)
		}
		scanAdd(&all, d)
		out.TotalMatched++
	}
	keys := make([]string, 0, len(accs))
	for k := range accs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(accs[b].dialogs, accs[a].dialogs), cmp.Compare(a, b)) })
	if len(keys) > maxGroups {
		var other MetricsAcc
		for _, d := range ds {
			if vs, _ := d.DimensionValues(dim); slices.ContainsFunc(vs, func(v string) bool { return slices.Contains(keys[maxGroups:], v) }) && match(d) {
				scanAdd(&other, d)
			}
		}
		r := other.Result()
		out.Other, out.OtherGroups = &r, len(keys)-maxGroups
		keys = keys[:maxGroups]
	}
	out.Groups = []Group{}
	for _, k := range keys {
		out.Groups = append(out.Groups, Group{Value: k, Metrics: accs[k].Result()})
	}
	out.Overall = all.Result()
	return out
}

// aggrFilters are filters the tools accept: none, the columned ones, and
// fields read from the dialog.
var aggrFilters = []string{"", `final_code >= 400`, `from_user ~ "^u1"`, `state == "answered" or cancelled`, `pdd_ms > 1000 or transport == "tcp"`, `has_bye or final_code == null`}

// TestAggregateMatchesScan: on random stores (calls from a handful of
// users, addresses (IPv4, IPv6, IPv4-mapped) and User-Agents, failing,
// ringing, answered, ended, challenged, cancelled, re-dialled, some
// opened by a REGISTER or an OPTIONS, some without users) under a dialog
// bound that evicts, with snapshots taken between the messages so that
// changed dialogs are copies of memoised ones, Aggregate and
// GroupMetrics equal the plain scans for every dimension, every filter of
// aggrFilters and bounds that cut and that keep every bucket, asked from
// two goroutines at once; so do the snapshot's, from its scan and from
// its columns, its aggregation and figures of runs of dialogs
// (AggregateRows, MetricsRows), and
// its problem scan (Each).
func TestAggregateMatchesScan(t *testing.T) {
	addrs := []netip.AddrPort{
		netip.MustParseAddrPort("192.0.2.1:5060"), netip.MustParseAddrPort("192.0.2.2:5060"), netip.MustParseAddrPort("192.0.2.3:5080"),
		netip.MustParseAddrPort("[2001:db8::1]:5060"), netip.MustParseAddrPort("[::ffff:192.0.2.1]:5062"), netip.MustParseAddrPort("[fe80::1%eth0]:5060"),
	}
	users := []string{"u1", "u12", "u2", "(none)", "", "bob"}
	uas := []string{"", "", "PolycomVVX/6.4", "Asterisk PBX 20", "sipp"}
	transports := []string{TransportUDP, TransportTCP, TransportTLS}
	var filters []func(*Dialog) bool
	var exprs []*filter.Expr
	for _, src := range aggrFilters {
		e, err := Compile(src)
		if err != nil {
			t.Fatal(err)
		}
		filters = append(filters, func(d *Dialog) bool { return e.Match(d) })
		exprs = append(exprs, e)
	}
	// nil: every dialog, as the tools pass the empty filter (no reads).
	filters = append(filters, nil)
	labels := append(slices.Clone(aggrFilters), "nil")
	every := func(*Dialog) bool { return true }
	seen := map[string]bool{} // dimensions that met more than one value
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 3939))
		st := newStore(t, Limits{Dialogs: 25})
		at := time.Unix(1000, 0)
		cseq := map[string]int{}
		for i := range 900 {
			n := rng.IntN(36)
			id := fmt.Sprintf("c%d-%d", seed, n)
			// A Call-ID keeps its parties; its messages come from either.
			from, to := users[n%len(users)], users[(n/3)%len(users)]
			a, b := addrs[n%len(addrs)], addrs[(n/2+1)%len(addrs)]
			c := cseq[id]
			method, code := "INVITE", 0
			switch k := rng.IntN(13); {
			case c == 0:
				c++
				method = []string{"INVITE", "INVITE", "REGISTER", "OPTIONS"}[rng.IntN(4)]
			case k < 2:
				c++ // a re-dial or a retry with credentials
			case k == 2: // a retransmission
			case k == 3:
				code = []int{180, 183}[rng.IntN(2)]
			case k <= 5:
				code = []int{200, 486, 503, 401, 407, 487, 480, 603, 404}[rng.IntN(9)]
			case k == 6:
				method = "ACK"
			case k == 7:
				method = "CANCEL"
			case k == 8:
				c++
				method = "BYE"
			case k == 9:
				method, code = "BYE", 200
			case k == 10:
				method = "REGISTER"
			default:
				code = 200
			}
			cseq[id] = c
			toTag, start := "", fmt.Sprintf("%s sip:%s@h SIP/2.0", method, to)
			if code != 0 {
				toTag, start = ";tag=9", fmt.Sprintf("SIP/2.0 %d X", code)
				a, b = b, a
			}
			ua := ""
			if u := uas[rng.IntN(len(uas))]; u != "" {
				ua = "User-Agent: " + u + "\r\n"
			}
			raw := fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d-%d\r\nFrom: <sip:%s@h>;tag=1\r\nTo: <sip:%s@h>%s\r\nCall-ID: %s\r\nCSeq: %d %s\r\n%s\r\n",
				start, c, rng.IntN(2), from, to, toTag, id, c, method, ua)
			raw = strings.ReplaceAll(raw, "sip:@h", "sip:h") // the empty user: a URI without one
			var m Parsed
			if err := m.Parse([]byte(raw)); err != nil {
				t.Fatal(err)
			}
			at = at.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
			st.Add(Meta{Time: at, Src: a, Dst: b, Transport: transports[n%len(transports)]}, &m, []byte(raw))
			if i%15 != 0 {
				continue
			}
			sn := st.Snapshot()
			var wg sync.WaitGroup
			var mu sync.Mutex
			var bad []string
			for range 2 {
				wg.Go(func() {
					// find_problems' scan, from the problem column: built on
					// the first ask, or carried on from the store's snapshot
					// before (the store changes between the snapshots).
					masks := []uint32{ProblemMask(ProblemNames())}
					for _, n := range ProblemNames() {
						masks = append(masks, ProblemMask([]string{n}))
					}
					for fi, e := range exprs {
						for _, mask := range masks {
							var want, got []uint64
							for _, d := range sn.Dialogs {
								if (filters[fi] == nil || filters[fi](d)) && AnyProblem(d, mask) {
									want = append(want, d.ID)
								}
							}
							sn.Each(e, mask, func(id uint64, d *Dialog) {
								if id != d.ID {
									t.Errorf("Each visits dialog %d with id %d", d.ID, id)
								}
								got = append(got, id)
							})
							if !slices.Equal(got, want) {
								mu.Lock()
								bad = append(bad, fmt.Sprintf("Each, filter %q, problems %b: %v, want %v", aggrFilters[fi], mask, got, want))
								mu.Unlock()
							}
						}
					}
					for _, dim := range Dimensions {
						for fi, match := range filters {
							ref := match
							if ref == nil {
								ref = every
							}
							for _, bound := range []int{2, 1000} {
								if got, want := Aggregate(sn.Dialogs, match, dim, bound), scanAggregate(sn.Dialogs, ref, dim, bound); !reflect.DeepEqual(got, want) {
									mu.Lock()
									bad = append(bad, fmt.Sprintf("Aggregate %s, filter %q, bound %d:\n got %+v\nwant %+v", dim, labels[fi], bound, got, want))
									mu.Unlock()
								}
								if got, want := GroupMetrics(sn.Dialogs, match, dim, bound), scanGroups(sn.Dialogs, ref, dim, bound); !reflect.DeepEqual(got, want) {
									mu.Lock()
									bad = append(bad, fmt.Sprintf("GroupMetrics %s, filter %q, bound %d:\n got %s\nwant %s", dim, labels[fi], bound, groupingText(got), groupingText(want)))
									mu.Unlock()
								}
							}
						}
						// The snapshot's answers, from its columns (siteColumns):
						// built on the first ask or carried on (carry.go); the
						// groups sorted on the second.
						for fi, e := range exprs {
							for ask := range 3 {
								bound := []int{2, 1000, 1}[ask]
								if got, want := sn.Aggregate(e, dim, bound), scanAggregate(sn.Dialogs, filters[fi], dim, bound); !reflect.DeepEqual(got, want) {
									mu.Lock()
									bad = append(bad, fmt.Sprintf("Snapshot.Aggregate %s, filter %q, bound %d, ask %d:\n got %+v\nwant %+v", dim, aggrFilters[fi], bound, ask, got, want))
									mu.Unlock()
								}
								if got, want := sn.GroupMetrics(e, dim, bound), scanGroups(sn.Dialogs, filters[fi], dim, bound); !reflect.DeepEqual(got, want) {
									mu.Lock()
									bad = append(bad, fmt.Sprintf("Snapshot.GroupMetrics %s, filter %q, bound %d, ask %d:\n got %s\nwant %s", dim, aggrFilters[fi], bound, ask, groupingText(got), groupingText(want)))
									mu.Unlock()
								}
							}
						}
						// A run of the dialogs (a compare_captures side), from the
						// same columns: every run's start and end by a step.
						n := len(sn.Dialogs)
						for lo := 0; lo <= n; lo += 1 + n/4 {
							for hi := lo; hi <= n; hi += 1 + n/3 {
								for _, bound := range []int{2, 1000} {
									if got, want := sn.AggregateRows(lo, hi, dim, bound), scanAggregate(sn.Dialogs[lo:hi], every, dim, bound); !reflect.DeepEqual(got, want) {
										mu.Lock()
										bad = append(bad, fmt.Sprintf("Snapshot.AggregateRows %s, rows %d to %d, bound %d:\n got %+v\nwant %+v", dim, lo, hi, bound, got, want))
										mu.Unlock()
									}
								}
								var acc MetricsAcc
								for _, d := range sn.Dialogs[lo:hi] {
									acc.Add(d)
								}
								if got, want := sn.MetricsRows(lo, hi), acc.Result(); !reflect.DeepEqual(got, want) {
									mu.Lock()
									bad = append(bad, fmt.Sprintf("Snapshot.MetricsRows, rows %d to %d:\n got %+v\nwant %+v", lo, hi, got, want))
									mu.Unlock()
								}
							}
						}
					}
				})
			}
			wg.Wait()
			for _, dim := range Dimensions {
				if kc := sn.site.keys[dim]; kc == nil || len(kc.values) == 0 {
					t.Fatalf("seed %d, message %d: no key column of %s was built: the columns were not exercised", seed, i, dim)
				}
			}
			if sn.cols == nil || sn.site.figs.rows.shares == nil || sn.site.problems.sets == nil {
				t.Fatalf("seed %d, message %d: the filter, figures or problem columns were not built", seed, i)
			}
			for _, set := range sn.site.problems.sets {
				seen["a problem"] = seen["a problem"] || set != problemsKnown
			}
			if len(bad) > 0 {
				t.Fatalf("seed %d, message %d: %d differ, the first: %s", seed, i, len(bad), bad[0])
			}
			for _, d := range sn.Dialogs {
				f, ok := d.memoFigures()
				seen["a PDD"] = seen["a PDD"] || f.hasPDD
				seen["a share past the memo"] = seen["a share past the memo"] || !ok
			}
			for _, dim := range Dimensions {
				if len(Aggregate(sn.Dialogs, func(*Dialog) bool { return true }, dim, 1000).Buckets) > 1 {
					seen[dim] = true
				}
			}
		}
		if sn := st.Snapshot(); sn.Stats.DialogsEvicted == 0 {
			t.Fatalf("seed %d: nothing evicted: the store did not exercise eviction", seed)
		}
	}
	for _, dim := range Dimensions {
		if !seen[dim] {
			t.Errorf("dimension %s never had two values: the stores did not exercise it", dim)
		}
	}
	for _, what := range []string{"a PDD", "a share past the memo", "a problem"} {
		if !seen[what] {
			t.Errorf("no dialog had %s: the stores did not exercise it", what)
		}
	}
}

// groupingText spells a Grouping's figures out (its Metrics hold
// pointers, which %+v prints as addresses).
func groupingText(g Grouping) string {
	s := fmt.Sprintf("matched %d, other groups %d, overall %s", g.TotalMatched, g.OtherGroups, metricsText(g.Overall))
	if g.Other != nil {
		s += ", other " + metricsText(*g.Other)
	}
	for _, gr := range g.Groups {
		s += fmt.Sprintf("; %q %s", gr.Value, metricsText(gr.Metrics))
	}
	return s
}

func metricsText(m CallMetrics) string {
	s := fmt.Sprintf("{%d %d %d", m.Dialogs, m.Attempts, m.Answered)
	for _, x := range []Metric{m.ASR, m.NER, m.ACD, m.PDDp50, m.PDDp95} {
		if x.Value != nil {
			s += fmt.Sprintf(" %g/%d", *x.Value, x.Population)
		} else {
			s += fmt.Sprintf(" null/%d", x.Population)
		}
	}
	return s + "}"
}
