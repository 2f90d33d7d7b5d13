// Package obd decodes OBD-II (SAE J1979 / ISO 15031-5) answers carried
// over ISO 15765-4, the CAN transport every car since 2008 speaks: modes
// 01 (current data), 02 (freeze frame), 03, 07 and 0A (stored, pending
// and permanent DTCs) and 09 (vehicle information), and negative
// responses.
//
// It is pure decode: services/isotp reassembles and pairs the messages it
// overhears; this package says which CAN ids are OBD's (so a 0x7DF
// request is read as OBD, not as UDS) and turns one answer's bytes into
// named values with their units, keeping each value's raw bytes. Text an
// ECU wrote (a VIN, a calibration id, its name) is returned as a plain
// string: mcp/ fences it when it builds a row.
//
// Formulas are the public ones of SAE J1979 as summarised in the
// Wikipedia article "OBD-II PIDs".
package obd
