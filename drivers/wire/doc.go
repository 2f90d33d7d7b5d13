// Package wire is the vocabulary every layer of fieldtap shares, as
// periph's conn/ is for its drivers: the SocketCAN id flags and masks, the
// struct can_frame layout behind LINKTYPE_CAN_SOCKETCAN, the link types
// fieldtap stores frames under, the candump log line codec, the J1708
// log line codec and the HEP3 codec (hep.go encodes for the exporter in
// services/hep, hepdecode.go decodes for the hep port driver).
//
// It does no I/O, opens no device and imports no other fieldtap package
// (stdlib and einride's CAN constants only), so services/ and mcp/ may
// import it while the rest of drivers/ stays out of their reach
// (DESIGN.md §2; imports_test.go checks both halves).
package wire
