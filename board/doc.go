// Package board describes the hardware fieldtapd runs on and brings it up.
//
// A profile (profiles/*.toml, embedded) names the board's ports as the same
// [[port]] tables a configuration file holds, its SPAN interface, its USB
// gadget and four GPIO lines: status, capture-activity and transmit-armed
// LEDs, and the transmit-arm input. Bring-up reports each part with
// periph's three outcomes: up, skipped (why) or failed (why).
//
// GPIO goes through periph.io/x/conn/v3 interfaces: gpiotest pins on the
// simulated board and in tests, host/v3 gpioioctl on a device. Every wait
// for an edge has a finite timeout (gpioioctl treats -1 as a deadline in
// the past and returns at once; see DESIGN.md §8).
package board
