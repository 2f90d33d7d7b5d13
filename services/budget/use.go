package budget

import "time"

// Use is one store instance's share and what it holds, as capture_status
// shows it. Bytes are heap bytes as the store accounts them (its items'
// structures, not only their payload); MaxBytes is the share.
type Use struct {
	Store         string  `json:"store"`
	Port          string  `json:"port,omitempty"`   // empty for a store several ports feed
	Shared        bool    `json:"shared,omitempty"` // fed by every port of its kind
	Items         int     `json:"items"`
	MaxItems      int     `json:"max_items"`
	Bytes         int64   `json:"bytes"`
	MaxBytes      int64   `json:"max_bytes"`
	ShareOfBudget float64 `json:"share_of_budget"` // MaxBytes / the budget, 3 decimals
	Evicted       uint64  `json:"evicted"`         // items pushed out by the bounds
	EvictedBytes  uint64  `json:"evicted_bytes"`
	Oversize      uint64  `json:"oversize"` // items refused because alone they exceed MaxBytes
	Revision      uint64  `json:"revision"`
	// Oldest is the time of the oldest item held: what an answer over the
	// store can still see; null for a store that does not keep times.
	Oldest *time.Time `json:"oldest,omitempty"`
	// Appended counts items ever accepted; EvictedTo is the time of the
	// newest evicted one (services/coverage reads both).
	Appended  uint64    `json:"-"`
	EvictedTo time.Time `json:"-"`
	// Reserved marks a fixed cost (a hand-off, a kernel ring, tables
	// bounded by the protocol): Bytes is the bound set aside, not a fill.
	Reserved bool `json:"reserved,omitempty"`
}

// Status is the whole budget: where it came from, the stores' pool and
// every share with its use.
type Status struct {
	BudgetBytes int64
	From        string
	PoolBytes   int64 // the stores' part of the budget
	SharesBytes int64 // every share added up: at most PoolBytes
	UsedBytes   int64
	Stores      []Use
}
