// Package rules evaluates configured conditions over the box's own
// figures on a ticker, so a fault is noticed while no agent is connected.
// It is pure: a Reader supplies the figures, the Engine keeps each rule's
// state (ok, pending, firing, no_data) and returns the state changes.
// What reads the stores is box.go; what publishes the changes is the
// caller's.
package rules
