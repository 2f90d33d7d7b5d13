// Package j1708gen generates deterministic, seeded SAE J1708 traffic with
// J1587 parameters at 9600 baud, as Messages or as a log with one message a
// line.
//
// The engine (MID 128) broadcasts, from one seeded drive shared with the
// J1939 generator:
//
//   - every 100 ms: road speed (PID 84) with engine speed (PID 190), and
//     accelerator pedal (PID 91) with engine load (PID 92);
//   - every second: coolant temperature (PID 110) with battery voltage
//     (PID 168), and its diagnostic code table (PID 194) holding one active
//     code, FaultPID/FaultFMI: the engine runs hot;
//   - every 10 s: total vehicle distance (PID 245).
//
// The brakes (MID 136) ask the engine for road speed every 5 s (PID 128,
// which the engine answers at once) and broadcast an empty diagnostic code
// table every 10 s. That is about 23 messages a second, a quarter of the
// bus.
//
// Messages queued together go out by priority, then MID (the lower wins
// the bus), each after the idle time J1708 bus access asks for. A message's
// Time is when its first byte starts. The same Options always give the same
// messages, on any GOARCH.
package j1708gen
