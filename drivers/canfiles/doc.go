// Package canfiles reads the CAN log files of vendor tools as captures:
// Vector ASC and BLF (CANalyzer, CANoe), PEAK TRC (PCAN-View, versions 1.0
// to 2.1) and SavvyCAN's GVRET CSV. Sniff tells them apart by content and
// Source replays one as a finite CAN port, as drivers/canlog does for
// candump logs.
//
// Every reader hands out Frames: a classic or CAN FD frame, a remote
// request or an error frame, with its time, the channel the file gave it and its
// offset from the file's start. A record the reader does not turn into a
// frame is given to a Bad callback with its cause (the Reason constants)
// and reading goes on: one bad line or object never ends the file.
//
// Time: where the file states its start (ASC's date and Begin
// Triggerblock lines, BLF's header, TRC's $STARTTIME from version 1.1 on)
// a frame's time is that start plus its offset, the start read as UTC as
// the files carry no zone; otherwise (TRC 1.0, a CSV whose time stamps are
// not Unix microseconds) it is the offset from the Unix epoch, as candump
// -ta lines are read.
package canfiles
