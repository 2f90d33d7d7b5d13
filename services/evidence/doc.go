// Package evidence seals recorded segments into bundles an agent can
// hand to a person: the frames of a time window around a trigger as one
// pcapng, the triggering answer as the caller gave it, a disclaimer and a
// manifest with the SHA-256 of each, itself digested. A bundle whose
// digests no longer match is refused, never served.
//
// A trigger (a filter expression matching a SIP dialog, a call failing, a
// J1939 DM1 fault appearing: Watcher) or a request pins the recorder's
// segments from Before to After around its moment, and the bundle is
// built once the window has been recorded; a request for a window already
// past is built at once (Build).
//
// Layout (docs/recorder.md): DIR/ID/{capture.pcapng, trigger.json,
// DISCLAIMER.txt, manifest.json, manifest.sha256}; DIR/pending/ID.json
// for a trigger waiting for its window, so a power cut does not lose it.
package evidence
