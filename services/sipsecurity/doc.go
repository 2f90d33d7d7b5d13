// Package sipsecurity finds attacks in a SIP store snapshot: scanner
// User-Agents, REGISTER and INVITE floods, digest brute force (401/407
// storms) and OPTIONS sweeps, per source address. A finding is a whole
// episode: every window where the source was past its threshold, merged
// until it stays below it for a whole window, with its totals, its peak
// window, its 4xx share, its sources, User-Agents, targets and evidence.
// Thresholds come from the daemon's configuration; the findings, their
// lists and their evidence are bounded and what is left out counted.
package sipsecurity
