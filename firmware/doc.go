// Package firmware holds what fieldtapd does to its own process before
// the daemon starts: dropping root for a user that keeps only the two
// capabilities capture needs. The daemon itself is in firmware/daemon.
package firmware
