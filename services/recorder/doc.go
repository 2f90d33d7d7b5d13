// Package recorder keeps every live port on disk: one ring of pcapng
// segments, written whole blocks at a time every FlushInterval and
// fdatasync'ed every SyncInterval, closed at a size or an age, each closed
// segment with a sidecar index, the oldest unpinned segment deleted first
// when the byte quota is reached (also across restarts, from the
// directory listing).
//
// At Open the directory is recovered: closed segments are trusted through
// their index, a segment left open by a kill or a power cut is scanned
// block by block and cut at its last whole block, and the gap is recorded
// with its bounds. A write error (a full disk) drops the recorder to
// RAM-only, records a gap and says so in Status; it retries, freeing the
// oldest unpinned segment, until a write succeeds.
//
// The read side serves what the daemon and the tools need: Refill (the
// newest segments that fit a memory budget, at start-up), Scan and Find
// (a bounded search over recorded segments with progress and
// cancellation), Segments, Gaps and Pins.
//
// Files (docs/recorder.md): PREFIX_NNNNN_YYYYMMDDhhmmss.pcapng, the name
// Wireshark's File Set dialog groups; its index NAME.idx (JSON);
// gaps.json; pins.json; .lock, held while a recorder owns the directory.
package recorder
