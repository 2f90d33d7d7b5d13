// Package sipvcon builds a vCon (draft-ietf-vcon-vcon-core, the IETF vCon
// WG's conversation container) from SIP dialogs the box captured: the
// From and To of each dialog as parties, each dialog as a Dialog Object
// ("text" with the SIP messages as captured, or "incomplete" with a
// disposition for a call that failed before any conversation), the
// box's own findings (outcome, lint) as Analysis Objects, and the calls'
// pcapng as an attachment when the caller gives one. The draft has no
// dialog type for signalling without a recording: "text" with the
// messages as JSON is the closest that keeps them; no audio is ever
// claimed.
package sipvcon
