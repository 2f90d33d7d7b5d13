// Package isotp is ISO 15765-2 (ISO-TP) on classic CAN and the diagnostic
// services that ride on it: UDS (ISO 14229-1), the KWP2000 services older
// ECUs still answer, and the OBD-II modes.
//
// Two directions share the frame codec (frame.go):
//   - the transmit side: Segment, FlowControl, the request builders and
//     Decode for the answers the transmit tools ask for (services/transmit
//     owns the wire and the timing);
//   - the listening side: an Observer reassembles what it overhears on
//     normal, extended and normal-fixed (J1939-style 0x18DA/0x18DB) ids,
//     reading flow control from the receiver and counting every transfer
//     that did not complete by its reason; a Tracer pairs requests with
//     their answers (pending answers, negative response codes, functional
//     requests answered by several ECUs) and times them. Store keeps the
//     transactions of every port live; TraceFrames runs a fresh tracer
//     over a window of a port's frame ring.
//
// Services, NRCs and DIDs are named from one reference table
// (services.go). The package returns plain values: text an ECU answers
// (a VIN, a part number) is a plain string, fenced by mcp/ when it
// builds the answer's row.
package isotp
