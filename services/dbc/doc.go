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
// Decoding is allocation-free into a caller-owned slice. The package takes
// plain values; it never imports drivers/ or mcp/.
package dbc
