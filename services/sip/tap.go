package sip

// Tap sees every stored message's bytes as captured, for export (HEP).
// It runs on the port's consumer goroutine; meta and raw are borrowed
// for the call. With no tap set the analyser pays one nil check.
type Tap interface {
	Message(meta Meta, raw []byte)
}

// SetTap attaches t; call it before the first Feed. nil detaches.
func (a *Analyser) SetTap(t Tap) { a.tap = t }
