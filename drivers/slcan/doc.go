// Package slcan captures CAN from Lawicel ASCII ("slcan") serial adapters
// such as the CANable and the USBtin, parsing the ASCII in userspace over
// go.bug.st/serial. It does not attach the kernel slcan line discipline.
//
// At start the Source closes the channel (C), sets the bitrate (S0–S8) and
// opens it listen-only (L), so the adapter never ACKs or sends error
// frames. An adapter that refuses L is an error: the port is never opened
// in normal mode. It then reads frame lines, with or without the 4-digit
// millisecond timestamp:
//
//	t1238DEADBEEF01020304      standard, 8 bytes
//	T18FECA0020102ABCD         extended, 2 bytes, timestamp 0xABCD ms
//	r1230  R18EAFF003          remote requests (no data)
//
// Adapters differ in acknowledgements (\r, z/Z, or nothing) and answer a
// refused command with BELL (0x07); all are tolerated, and BELL and every
// malformed line are counted by reason in Stats().Errors. The capture time
// is the host's receive time: adapter timestamps wrap every 60 s and start
// at an unknown origin, so they are only checked, never used as time.
//
// Frames leave as LinkCANSocketCAN bytes, like every CAN port.
package slcan
