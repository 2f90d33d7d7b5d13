package sip

import (
	"slices"
	"sync"
)

// derivedKeys is how many answers a snapshot keeps (Snapshot.Derived).
const derivedKeys = 4

// derived are answers a caller derived from every dialog of a snapshot,
// by key, oldest first.
type derived struct {
	mu   sync.Mutex
	keys []string
	vals []any
}

// Derived returns build's answer over the snapshot for key, built once
// while the snapshot keeps it: a quiet store gives every call the same
// snapshot, so an answer that reads every dialog (sip_security_findings'
// analysis) is not made again until the store changes; what it reads of
// every dialog can be carried to the next snapshot in a RowColumn. The
// key must name everything the answer depends on besides the dialogs
// (its filter, its thresholds); the answer must not be written after.
// The last derivedKeys keys are kept. Two calls that ask for a key at
// once may both build it.
func (sn *Snapshot) Derived(key string, build func() any) any {
	dv := &sn.derived
	dv.mu.Lock()
	if i := slices.Index(dv.keys, key); i >= 0 {
		v := dv.vals[i]
		dv.mu.Unlock()
		return v
	}
	dv.mu.Unlock()
	v := build()
	dv.mu.Lock()
	defer dv.mu.Unlock()
	if !slices.Contains(dv.keys, key) {
		if len(dv.keys) == derivedKeys {
			dv.keys, dv.vals = dv.keys[1:], dv.vals[1:]
		}
		dv.keys, dv.vals = append(dv.keys, key), append(dv.vals, v)
	}
	return v
}
