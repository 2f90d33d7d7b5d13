// Package isotp is the ISO 15765-2 (ISO-TP) transport on classic CAN and
// the few UDS (ISO 14229-1) services the transmit tools speak: session
// control (0x10), ReadDataByIdentifier (0x22), ReadDTCInformation (0x19)
// and TesterPresent (0x3E), with every negative response code named.
//
// It is pure: byte slices in, byte slices out, no clock and no bus. The
// transmitter (services/transmit) owns the wire and the timing; this
// package only says what the bytes are and what they mean.
package isotp
