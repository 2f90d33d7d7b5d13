// Package sip turns SIP messages into dialogs: a parser of our own for
// RFC 3261 messages (compact forms, folded headers, capped lines and header
// counts; it never panics and names why it refused a message), framing for
// SIP over TCP and WebSocket, an Analyser fed from services/netdecode, and a
// bounded dialog Store (one dialog per Call-ID, transactions and
// retransmissions, state, final status, timings) whose evictions are
// counted and whose readers get consistent snapshots.
package sip
