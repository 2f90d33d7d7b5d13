package mcp

import "fieldtap/services/ring"

// Helpers for the row constructors (xRowOf) that build a tool's answer
// rows from what services/ returns. A row with the value's fields one for
// one is a conversion, j1939DTCRow(d): a field added in services/ then
// fails to compile in mcp/ until the answer decides about it.

// mapRows builds one row per value. A nil list stays nil and an empty one
// empty, so the answer says null or [] as the services value does.
func mapRows[V, R any](vs []V, row func(V) R) []R {
	if vs == nil {
		return nil
	}
	out := make([]R, len(vs))
	for i, v := range vs {
		out[i] = row(v)
	}
	return out
}

// rowOrNil builds the row of *v, or nil (null) without one.
func rowOrNil[V, R any](v *V, row func(V) R) *R {
	if v == nil {
		return nil
	}
	r := row(*v)
	return &r
}

// ringStatsRow is a store's ring, wherever an answer shows one
// (can_buses' frame_store, j1587_summary's stored): what it keeps and
// what its bounds pushed out or refused.
type ringStatsRow struct {
	Items        int    `json:"items"`
	Bytes        int64  `json:"bytes"`
	Evicted      uint64 `json:"evicted"`       // items pushed out by the limits
	EvictedBytes uint64 `json:"evicted_bytes"` // their bytes
	Oversize     uint64 `json:"oversize"`      // items refused because alone they exceed the byte limit
	Appended     uint64 `json:"appended"`      // items ever accepted
	Revision     uint64 `json:"revision"`
}

func ringStatsRowOf(s ring.Stats) ringStatsRow {
	return ringStatsRow{Items: s.Items, Bytes: s.Bytes, Evicted: s.Evicted, EvictedBytes: s.EvictedBytes, Oversize: s.Oversize,
		Appended: s.Appended, Revision: s.Revision}
}
