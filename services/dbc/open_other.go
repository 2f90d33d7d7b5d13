//go:build !unix

package dbc

// openNonBlock is not needed where there are no FIFOs to open.
const openNonBlock = 0
