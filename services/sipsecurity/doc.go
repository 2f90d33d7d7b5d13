// Package sipsecurity finds attacks in a SIP store snapshot: scanner
// User-Agents, REGISTER and INVITE floods, digest brute force (401/407
// storms) and OPTIONS sweeps, per source address, each finding with its
// evidence rows. Thresholds come from the daemon's configuration; the
// findings and their evidence are bounded and what is left out counted.
package sipsecurity
