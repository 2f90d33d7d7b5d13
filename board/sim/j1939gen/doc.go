// Package j1939gen generates a deterministic, seeded J1939 truck on a
// 250 kbit/s CAN bus (29-bit identifiers), as Frames or as a candump -l log.
//
// Four ECUs claim their addresses at Start (PGN 60928), wait the 250 ms
// J1939-81 asks for, then broadcast:
//
//   - engine (0x00): EEC1 every 10 ms, CCVS every 100 ms, ET1 and DM1 every
//     second, and the VIN (PGN 65260) every 5 s as a BAM transport;
//   - transmission (0x03): ETC1 every 10 ms, ETC2 every 100 ms;
//   - brakes (0x0B): EBC1 every 100 ms;
//   - body controller (0x21): AMB every second.
//
// That is about 233 frames a second, 12 % bus load before bit stuffing. Signals follow one
// seeded drive (pull away, cruise, stop) through a six-speed gearbox, so
// engine speed, wheel speed, gear and brake pedal agree. The engine is
// running hot: DM1 carries one active fault, FaultSPN/FaultFMI, and ET1
// shows it.
//
// Frames queued at the same moment go out by CAN arbitration (lowest
// identifier first) one frame time apart (bit stuffing ignored), so
// timestamps are strictly increasing, in whole microseconds from Start. The
// same Options always give the same frames, on any GOARCH.
package j1939gen
