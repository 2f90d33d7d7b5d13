// Package audio turns one RTP stream's packets into 16-bit PCM, as a
// listener would have heard it: packets put in sequence order, decoded
// (G.711 µ-law and A-law, G.722), and placed by RTP timestamp, so a
// packet that never came, a pause in sending or comfort noise becomes
// silence of the length the timestamps say. Every such silence is listed
// with its cause. Mix puts two sides of a call on the two channels of
// one stereo track, aligned on capture time.
//
// The decoders live in their own packages (g711, g722) and the file
// format in wav; this package only orders, places and counts.
package audio
