// Package pcapng writes and scans pcapng blocks one at a time, for the
// recorder: it appends whole blocks (section header, interface
// description, enhanced packet) to a caller's buffer so the caller decides
// when bytes reach the disk, and it reads a file block by block, checking
// each block's leading and trailing lengths, so a file cut by a power
// failure is read up to its last whole block and no further.
//
// gopacket's pcapgo is right for whole files written and read in one go;
// it is not used here because its NgWriter buffers internally and never
// syncs, and its reader does not compare a block's trailing length with
// its leading one (DESIGN.md §9).
//
// Layout: draft-ietf-opsawg-pcapng (the IETF pcapng draft), little-endian
// on write, either byte order on read.
package pcapng
