// Package transmit is the only code path from fieldtap to a bus. Every
// tool, the operator CLI and any future caller that wants a byte on a wire
// goes through Service, which checks every gate itself, whatever the
// caller: the MCP bundle is loaded, the caller's token carries the
// transmit scope (HTTP), ack_active is true, the port is enabled for
// transmit in config, the board's transmit-arm input is on, the per-port
// rate limit and the bus-load ceiling allow it, a person confirmed it
// where the client can ask one, and the audit record is written before
// the first byte. A refusal is a *Refusal naming the gate.
//
// Work comes as a Plan: the frames, byte for byte, with their timing, the
// risk class, and what the plan cannot know. A dry run stores the plan and
// never touches a writer; Execute runs exactly the stored plan, once.
//
// Writers, arm switches, mode setters, listeners and auditors are small
// interfaces declared here; firmware/daemon adapts drivers to them, so
// this package imports no driver (DESIGN.md §2).
package transmit
