// Package board describes the hardware fieldtapd runs on and brings it up.
//
// A profile (profiles/*.toml, embedded) names the board's ports as the same
// [[port]] tables a configuration file holds, its SPAN interface, its USB
// gadget and five GPIO lines: status, capture-activity and transmit-armed
// LEDs, the transmit-arm input (a key switch) and the confirm input (a push
// button beside it). Bring-up reports each part with periph's three
// outcomes: up, skipped (why) or failed (why).
//
// The confirm button is the consent no MCP client can forge: while a plan
// waits for it (transmit.require_button), the status LED blinks the plan's
// code (BlinkSteps) and only a fresh press counts. ConfirmButton satisfies
// services/transmit's Button; on the simulated board a press is a change
// of a file (PressFile, `fieldtap button press`).
//
// GPIO goes through periph.io/x/conn/v3 interfaces: gpiotest pins on the
// simulated board and in tests, host/v3 gpioioctl on a device. Every wait
// for an edge has a finite timeout (gpioioctl treats -1 as a deadline in
// the past and returns at once; see DESIGN.md §8).
package board
