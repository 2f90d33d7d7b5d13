// Package batchlock is a mutex for state that one goroutine, the feeder,
// writes frame by frame while others read it. The feeder may hold the
// lock across a batch of calls that would each take it, so a batch of
// frames pays for one lock instead of one a frame (issue #14: three such
// locks were 15 % of the SPAN consumer's time). Readers always lock, and
// wait at most one batch.
package batchlock
