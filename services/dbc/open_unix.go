//go:build unix

package dbc

import "syscall"

// openNonBlock opens a FIFO without waiting for a writer; on a regular
// file it changes nothing.
const openNonBlock = syscall.O_NONBLOCK
