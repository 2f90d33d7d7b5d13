package sip

import (
	"cmp"
	"slices"
)

// TextDimension reports whether dim's values are sender text (a
// User-Agent, which the sender wrote freely) rather than the box's own
// vocabulary (methods, states, codes, transports) or identifiers (URI
// users, addresses): an answer fences the former and leaves the rest
// bare. NoValue is the box's own word in every dimension.
func TextDimension(dim string) bool { return dim == "user_agent" }

// Bucket is the dialogs sharing one value of a dimension.
type Bucket struct {
	Value string // NoValue when the dialog has none
	Count int
}

// Aggregation counts the dialogs a filter matched by one dimension. In a
// single-valued dimension every matched dialog is in exactly one bucket,
// so the kept buckets' counts plus OtherCount equal TotalMatched; in a
// MultiDimension (Multi) a dialog counts in each of its participants'
// buckets and the counts add up to more.
type Aggregation struct {
	Multi        bool
	Buckets      []Bucket // largest first, ties by value; at most the bound asked for
	OtherBuckets int      // buckets past the bound
	OtherCount   int      // dialogs in them
	TotalMatched int
}

// CountStates counts ds (a snapshot's dialogs) by state; empty, never
// nil, without a dialog.
func CountStates(ds []*Dialog) map[string]int {
	n := map[string]int{}
	for _, d := range ds {
		n[d.State]++
	}
	return n
}

// Aggregate counts ds (a snapshot's dialogs) that match accepts (every
// one when match is nil) by dim, keeping the maxBuckets largest buckets.
// dim must be one of Dimensions.
func Aggregate(ds []*Dialog, match func(*Dialog) bool, dim string, maxBuckets int) Aggregation {
	k := newKeyer(dim)
	var counts []int // by key id
	out := Aggregation{Multi: MultiDimension(dim)}
	for i, d := range ds {
		if i%warmBlock == 0 {
			block := ds[i:min(i+warmBlock, len(ds))]
			if match != nil {
				warm(block)
			}
			k.warm(block)
		}
		if match == nil || match(d) {
			for _, id := range k.keys(d) {
				if int(id) == len(counts) {
					counts = append(counts, 0)
				}
				counts[id]++
			}
			out.TotalMatched++
		}
	}
	out.Buckets = make([]Bucket, len(counts))
	for id, n := range counts {
		out.Buckets[id] = Bucket{Value: k.values[id], Count: n}
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

// Group is the call figures of the dialogs sharing one value.
type Group struct {
	Value   string // NoValue when the dialog has none
	Metrics CallMetrics
}

// Grouping is the call figures per value of one dimension; in a
// MultiDimension (Multi) a dialog is measured in each of its
// participants' groups, and once in Other.
type Grouping struct {
	Multi  bool
	Groups []Group // largest first, ties by value; at most the bound asked for
	// Other measures the dialogs of the groups past the bound together;
	// nil when every group is kept.
	Other        *CallMetrics
	OtherGroups  int
	Overall      CallMetrics // every matched dialog
	TotalMatched int
}

// GroupMetrics computes the call figures of ds that match accepts (every
// one when match is nil), per value of dim, keeping the maxGroups
// largest groups and measuring the rest together. dim must be one of
// Dimensions.
func GroupMetrics(ds []*Dialog, match func(*Dialog) bool, dim string, maxGroups int) Grouping {
	k := newKeyer(dim)
	var accs []MetricsAcc // by key id
	var all MetricsAcc
	out := Grouping{Multi: MultiDimension(dim)}
	for i, d := range ds {
		if i%warmBlock == 0 {
			k.warmFor(ds[i:min(i+warmBlock, len(ds))], match != nil)
		}
		if match != nil && !match(d) {
			continue
		}
		f, ok := d.memoFigures()
		for _, id := range k.keys(d) {
			if int(id) == len(accs) {
				accs = append(accs, MetricsAcc{})
			}
			accs[id].addDialog(d, &f, ok)
		}
		all.addDialog(d, &f, ok)
		out.TotalMatched++
	}
	ids := make([]int32, len(accs))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int {
		return cmp.Or(cmp.Compare(accs[b].dialogs, accs[a].dialogs), cmp.Compare(k.values[a], k.values[b]))
	})
	if len(ids) > maxGroups {
		var other MetricsAcc
		if out.Multi {
			// A dialog in several of the rest's groups is measured once.
			rest := make([]bool, len(accs))
			for _, id := range ids[maxGroups:] {
				rest[id] = true
			}
			for i, d := range ds {
				if i%warmBlock == 0 {
					k.warmFor(ds[i:min(i+warmBlock, len(ds))], match != nil)
				}
				if (match == nil || match(d)) && slices.ContainsFunc(k.keys(d), func(id int32) bool { return rest[id] }) {
					other.Add(d)
				}
			}
		} else {
			// Each dialog is in one group: the rest's together are theirs.
			for _, id := range ids[maxGroups:] {
				other.merge(&accs[id])
			}
		}
		r := other.Result()
		out.Other, out.OtherGroups = &r, len(ids)-maxGroups
		ids = ids[:maxGroups]
	}
	out.Groups = make([]Group, 0, len(ids))
	for _, id := range ids {
		out.Groups = append(out.Groups, Group{Value: k.values[id], Metrics: accs[id].Result()})
	}
	out.Overall = all.Result()
	return out
}

// warmFor warms a block of dialogs for GroupMetrics: what a filter
// reads when there is one, what the dimension's keys read, the memo
// words.
func (k *keyer) warmFor(block []*Dialog, filtered bool) {
	if filtered {
		warm(block)
	}
	k.warm(block)
	warmMemos(block)
}
