// Package transmit is the only code path from fieldtap to a bus. Every
// tool, the operator CLI and any future caller that wants a byte on a wire
// goes through Service, which checks every gate itself, whatever the
// caller: the MCP bundle is loaded, the caller's token carries the
// transmit scope (HTTP), ack_active is true, the plan is the caller's own,
// the port is enabled for transmit in config, the board's transmit-arm
// input is on, the per-port rate limit and the bus-load ceiling allow it,
// a person confirmed it where the client can ask one, a person at the box
// pressed the confirm button where the box requires it, and the audit
// record is written before the first byte. A refusal is a *Refusal naming
// the gate, with a stable code where a gate has several reasons.
//
// Work comes as a Plan: the frames, byte for byte, with their timing, the
// risk class, and what the plan cannot know. A dry run stores the plan for
// its Owner (token and session) and never touches a writer; Execute runs
// exactly the stored plan, once, for that owner only.
//
// A confirmation is bound to one plan, one tool call, one owner and one
// answer: its request state carries an HMAC under a secret this process
// holds, and expires in ConfirmTTL. That stops a state being forged,
// moved or replayed; it cannot stop a dishonest client writing "accept".
// The confirm Button can: it is read here, as the arm switch is.
//
// Writers, arm switches, the confirm button, mode setters, listeners and
// auditors are small interfaces declared here; firmware/daemon adapts
// drivers and board/ to them, so this package imports neither (DESIGN.md
// §2).
package transmit
