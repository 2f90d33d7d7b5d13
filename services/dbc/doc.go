// Package dbc loads Vector DBC databases and decodes CAN frames with them.
//
// It wraps go.einride.tech/can/pkg/dbc, whose parser rejects or misreads
// files found in the field, so Parse first:
//   - refuses a file over MaxFileBytes;
//   - transcodes a file that is not UTF-8 from Windows-1252 (Latin-1 with
//     the 0x80–0x9F printables), which Vector tools write;
//   - strips `//` line comments outside strings;
//   - rewrites extended multiplexing (`m0M`, a multiplexed multiplexer) to
//     what einride accepts and reads the SG_MUL_VAL_ ranges itself;
//   - after parsing, refuses a file that defines no message (prose parses
//     "ok" as unknown statements) and one whose message or signal
//     definitions the parser skipped.
//
// Every refusal is an *Error naming the file, the line and the reason.
// Decoding is allocation-free into a caller-owned slice. Beyond decoding
// one frame:
//   - Inspect lists each message's signal layout (start bit, length, byte
//     order, scaling, multiplexing, value tables, the J1939 SPN attribute);
//   - Encode turns physical values into a payload, refusing a value that
//     does not fit its bits or the declared range, and round-trips with
//     Decode;
//   - DecodeWindow decodes every message of a window of frames, single
//     frames and J1939 transfer payloads alike (LookupTransfer).
//
// Everything the file's author wrote (names, comments, units, value
// labels) comes back as plain strings, names unchanged so they round-trip
// into the next call; mcp/ fences that text when it builds an answer. The
// package takes plain values; it never imports drivers/ beyond wire, or mcp/.
package dbc
