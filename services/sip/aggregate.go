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

// Aggregate counts ds (a snapshot's dialogs) that match accepts by dim,
// keeping the maxBuckets largest buckets. dim must be one of Dimensions.
func Aggregate(ds []*Dialog, match func(*Dialog) bool, dim string, maxBuckets int) Aggregation {
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
	out.Buckets = make([]Bucket, 0, len(counts))
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

// GroupMetrics computes the call figures of ds that match accepts, per
// value of dim, keeping the maxGroups largest groups and measuring the
// rest together. dim must be one of Dimensions.
func GroupMetrics(ds []*Dialog, match func(*Dialog) bool, dim string, maxGroups int) Grouping {
	accs := map[string]*MetricsAcc{}
	counts := map[string]int{}
	var all MetricsAcc
	out := Grouping{Multi: MultiDimension(dim)}
	for _, d := range ds {
		if !match(d) {
			continue
		}
		vs, _ := d.DimensionValues(dim)
		for _, v := range vs {
			a := accs[v]
			if a == nil {
				a = &MetricsAcc{}
				accs[v] = a
			}
			a.Add(d)
			counts[v]++
		}
		all.Add(d)
		out.TotalMatched++
	}
	keys := make([]string, 0, len(accs))
	for k := range accs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b)) })
	if len(keys) > maxGroups {
		rest := map[string]bool{}
		for _, k := range keys[maxGroups:] {
			rest[k] = true
		}
		var other MetricsAcc
		for _, d := range ds {
			if vs, _ := d.DimensionValues(dim); slices.ContainsFunc(vs, func(v string) bool { return rest[v] }) && match(d) {
				other.Add(d)
			}
		}
		r := other.Result()
		out.Other, out.OtherGroups = &r, len(keys)-maxGroups
		keys = keys[:maxGroups]
	}
	out.Groups = make([]Group, 0, len(keys))
	for _, k := range keys {
		out.Groups = append(out.Groups, Group{Value: k, Metrics: accs[k].Result()})
	}
	out.Overall = all.Result()
	return out
}
