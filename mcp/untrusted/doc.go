// Package untrusted is the type of text that whoever sent the captured
// traffic wrote: SIP display names, User-Agents, reason phrases and bodies,
// VIN and component strings, J1587 text, DBC comments. Such text can
// carry instructions aimed at the agent that reads an answer, terminal
// escapes and bidi overrides (DESIGN.md §4).
//
// Text and Body fence themselves when they are encoded (encoding/json,
// or anything else that honours encoding.TextMarshaler): control and bidi
// characters removed, the fence brackets rewritten inside, a cap with a
// visible mark, and the whole wrapped in Open … Close. Because the fence
// belongs to the type, no walker can miss a field and no answer can carry
// sender text bare: a row that holds an untrusted.Text fences it wherever
// it is copied.
//
// Identifiers (Call-IDs, CAN ids, addresses) stay plain strings so they
// round-trip into the next call, and the box's own vocabulary (states,
// codes, buckets, its drawings) is never this type: fencing what the box
// computed would tell the agent to distrust the analysis.
package untrusted
