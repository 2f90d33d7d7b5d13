// Package drive is the seeded trip the CAN and J1708 generators share: a
// truck pulls away at 0, cruises, slows, stops and pulls away again, through
// a six-speed gearbox. Everything is integer arithmetic, so every GOARCH
// computes the same values.
package drive
