package rtp

import (
	"bytes"
	"fmt"
	"net/netip"
	"strconv"
	"time"
)

// DTMF methods.
const (
	MethodRFC4733 = "rfc4733"
	MethodSIPInfo = "sip-info"
)

const (
	eventEnd    = 0x80 // RFC 4733 §2.3 E bit
	eventLen    = 4    // event, E/R/volume, duration
	eventFlash  = 16
	maxInfoBody = 256 // a dtmf-relay body is two short lines
)

// Event is one DTMF digit.
type Event struct {
	// Seq is the event's place in publication order, never reused: a
	// stable key while events are added and the oldest overwritten.
	Seq    uint64
	Time   time.Time
	CallID string
	Digit  string
	Method string
	// DurationMs is the final duration the sender reported (RFC 4733 in
	// timestamp units at 8 kHz; SIP INFO's Duration=).
	DurationMs *float64
	// Stream identifies the RTP stream for rfc4733 events.
	Stream string
	// EndSeen is false when no end packet arrived (the next event or the
	// capture's end closed it).
	EndSeen bool
	// EndRepeats counts repeated end packets de-duplicated into this event.
	EndRepeats int
}

// dtmfState follows one stream's telephone-events. An event is one RTP
// timestamp; its end packet is sent three times (RFC 4733 §2.5.1.4).
type dtmfState struct {
	active   bool
	ts       uint32
	first    int64
	code     uint8
	duration uint16
	ended    int // end packets seen for the active event
	emitted  []pendingEvent
}

// pendingEvent is a finished event waiting for the analyser to publish
// it with its stream and Call-ID.
type pendingEvent struct {
	at       int64
	code     uint8
	duration uint16
	end      bool
	repeatOf bool // a repeated end packet of an event already published
}

func (d *dtmfState) add(t int64, h *Header) {
	p := h.Payload
	if len(p) < eventLen {
		return
	}
	code, end, dur := p[0], p[1]&eventEnd != 0, uint16(p[2])<<8|uint16(p[3])
	if !d.active || h.TS != d.ts {
		if d.active && d.ended == 0 {
			d.emitted = append(d.emitted, pendingEvent{at: d.first, code: d.code, duration: d.duration})
		}
		*d = dtmfState{active: true, ts: h.TS, first: t, code: code, emitted: d.emitted}
	}
	d.duration = max(d.duration, dur)
	if !end {
		return
	}
	d.ended++
	d.emitted = append(d.emitted, pendingEvent{at: d.first, code: d.code, duration: d.duration, end: true, repeatOf: d.ended > 1})
}

// digitName maps an RFC 4733 §3.2 event code.
func digitName(code uint8) string {
	switch {
	case code <= 9:
		return string('0' + rune(code))
	case code == 10:
		return "*"
	case code == 11:
		return "#"
	case code <= 15:
		return string('A' + rune(code-12))
	case code == eventFlash:
		return "flash"
	}
	return "event " + strconv.Itoa(int(code))
}

// parseInfoDTMF reads a SIP INFO body: application/dtmf-relay
// ("Signal=5\r\nDuration=160") or application/dtmf (the digit alone).
func parseInfoDTMF(contentType, body []byte) (digit string, durMs *float64, ok bool) {
	if len(body) > maxInfoBody {
		return "", nil, false
	}
	ct := bytes.ToLower(bytes.TrimSpace(contentType))
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = bytes.TrimSpace(ct[:i])
	}
	switch string(ct) {
	case "application/dtmf-relay":
		for line := range bytes.Lines(body) {
			k, v, found := bytes.Cut(bytes.TrimSpace(line), []byte("="))
			if !found {
				continue
			}
			v = bytes.TrimSpace(v)
			switch string(bytes.ToLower(bytes.TrimSpace(k))) {
			case "signal":
				digit = canonicalDigit(v)
			case "duration":
				if n, err := strconv.Atoi(string(v)); err == nil && n >= 0 {
					f := float64(n)
					durMs = &f
				}
			}
		}
		return digit, durMs, digit != ""
	case "application/dtmf":
		d := canonicalDigit(bytes.TrimSpace(body))
		return d, nil, d != ""
	}
	return "", nil, false
}

func canonicalDigit(v []byte) string {
	if len(v) == 1 {
		c := v[0]
		switch {
		case c >= '0' && c <= '9', c == '*', c == '#':
			return string(c)
		case c >= 'A' && c <= 'D':
			return string(c)
		case c >= 'a' && c <= 'd':
			return string(c - 'a' + 'A')
		}
	}
	if n, err := strconv.Atoi(string(v)); err == nil && n >= 0 && n <= eventFlash {
		return digitName(uint8(n))
	}
	return ""
}

// StreamID renders k as the identifier tools use: src>dst/SSRC, the
// SSRC as 8 upper-case hex digits (the one hex spelling of answers).
func StreamID(k Key) string {
	return k.Src.String() + ">" + k.Dst.String() + "/" + fmt.Sprintf("%08X", k.SSRC)
}

// ParseStreamID is StreamID's inverse.
func ParseStreamID(s string) (Key, bool) {
	gt := bytes.IndexByte([]byte(s), '>')
	sl := bytes.LastIndexByte([]byte(s), '/')
	if gt < 0 || sl < gt {
		return Key{}, false
	}
	src, err1 := netip.ParseAddrPort(s[:gt])
	dst, err2 := netip.ParseAddrPort(s[gt+1 : sl])
	ssrc, err3 := strconv.ParseUint(s[sl+1:], 16, 32)
	if err1 != nil || err2 != nil || err3 != nil {
		return Key{}, false
	}
	return Key{Src: src, Dst: dst, SSRC: uint32(ssrc)}, true
}
