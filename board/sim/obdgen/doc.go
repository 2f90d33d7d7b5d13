// Package obdgen generates a deterministic OBD-II session between a scan
// tool and a car (SAE J1979 over ISO 15765-4), as Frames or as a candump -l
// log, for tests of a passive OBD decoder.
//
// Two ECUs answer on 11-bit ids (engine 0x7E8, transmission 0x7E9) and
// the engine once more on 29-bit ids (0x18DAF110): the tool asks
// functionally (0x7DF, 0x18DB33F1) and physically (0x7E0, 0x18DA10F1) for
// the supported-PID bitmaps, the Readings of mode 01, a freeze frame
// (mode 02), the stored, pending and permanent DTCs (modes 03, 07, 0A) and
// the vehicle information of mode 09 (VIN, calibration id, CVN and ECU
// name, the long ones in multi-frame ISO-TP transfers with flow control
// from the tool), and one request the engine refuses (a negative response).
//
// The values are encoded here from their physical values by the inverse
// of the public J1979 formulas, so a decoder that gets them back agrees
// with the encoding, not with itself.
package obdgen
