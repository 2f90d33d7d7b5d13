package sip

import (
	"bytes"
	"encoding/binary"
	"time"

	"fieldtap/services/netdecode"
	"fieldtap/services/tlsdecrypt"
)

type streamMode int

const (
	modeUnknown   streamMode = iota
	modeSIP                  // SIP framed by Content-Length
	modeHandshake            // HTTP request or response, before WebSocket
	modeWS                   // WebSocket frames carrying SIP (RFC 7118)
	modeTLS                  // TLS records: decrypted with logged keys, and offered to the TCP hook
	modeIgnore               // other traffic: consumed unread
)

type streamState struct {
	mode     streamMode
	gaps     int
	ws       []byte   // WebSocket message being reassembled (unmasked)
	wsFrames []uint64 // the frames that carried it (TrackFrames)
	// tls decrypts a TLS direction whose keys can be logged; nil when
	// there is no decryptor, the direction opened with an alert, or it
	// could not be read (then the records only go to the TCP hook).
	tls    *tlsdecrypt.Half
	tlsSIP bool // the decrypted bytes were SIP
	sips   bool // to or from the SIPS port
}

// tls record constants (RFC 8446 §5.1).
const (
	tlsHandshake   = 0x16
	tlsAlert       = 0x15
	tlsMajor       = 0x03
	tlsClientHello = 0x01
	tlsRecordHdr   = 5
	// sipsPort is SIP over TLS's well-known port (RFC 3261 §26.2).
	sipsPort = 5061
)

// TCP implements netdecode.Handler: it classifies each direction once
// (SIP, WebSocket handshake, TLS, other) and frames messages.
func (a *Analyser) TCP(s *netdecode.Stream, t time.Time, data []byte) int {
	st, _ := s.State.(*streamState)
	if st == nil {
		st = &streamState{gaps: s.Gaps}
		s.State = st
	}
	if s.Gaps != st.gaps { // bytes were lost: framing must start again
		st.gaps = s.Gaps
		st.ws = st.ws[:0]
		if st.mode == modeSIP || st.mode == modeWS {
			a.count(func(c *StreamStats) { c.Resyncs++ })
		}
		if st.mode == modeSIP {
			st.mode = modeUnknown
		}
		if st.tls != nil {
			st.tls.Lost()
		}
	}
	meta := Meta{Time: t, Src: s.Src, Dst: s.Dst, Transport: TransportTCP}
	done := 0
	for done < len(data) {
		b := data[done:]
		var n int
		switch st.mode {
		case modeUnknown:
			a.classify(st, s, b)
			if st.mode == modeUnknown {
				return done // need more bytes to decide
			}
			continue // read the same bytes in the mode just decided
		case modeIgnore:
			return len(data)
		case modeTLS:
			if st.tls == nil {
				return done + a.offerTLS(s, t, b)
			}
			meta.Transport = TransportTLS
			n = a.readTLS(st, meta, b, s, done)
		case modeSIP:
			n = a.frameSIP(st, meta, b, s, done)
		case modeHandshake:
			n = a.handshake(st, b)
		case modeWS:
			meta.Transport = TransportWS
			n = a.frameWS(st, meta, b, s, done)
		}
		if n == 0 {
			return done
		}
		done += n
	}
	return done
}

// classify decides st's mode from the first bytes of a direction, or
// leaves it unknown until more bytes come.
func (a *Analyser) classify(st *streamState, s *netdecode.Stream, b []byte) {
	sips := s.Src.Port() == sipsPort || s.Dst.Port() == sipsPort
	switch {
	// A server refusing a ClientHello answers with an alert record first.
	case len(b) >= tlsRecordHdr+1 && (b[0] == tlsHandshake || b[0] == tlsAlert) && b[1] == tlsMajor:
		st.mode, st.sips = modeTLS, sips
		if a.tls != nil && b[0] == tlsHandshake {
			st.tls = a.tls.Open(s.Src, s.Dst)
		}
		a.count(func(c *StreamStats) {
			c.TLS++
			if sips && st.tls == nil {
				c.TLSOnSIPS++
			}
			if b[0] == tlsHandshake && b[tlsRecordHdr] == tlsClientHello {
				c.TLSSessions++
			}
		})
	case bytes.HasPrefix(b, []byte("GET ")) || bytes.HasPrefix(b, []byte("HTTP/1.1 101")):
		st.mode = modeHandshake
	case isKeepAlive(b) || LooksLikeSIP(b):
		st.mode = modeSIP
		a.count(func(c *StreamStats) { c.SIP++ })
	case bytes.IndexByte(b, '\n') < 0 && len(b) < MaxHeaderLine:
		// the first line is not complete yet
	default:
		st.mode = modeIgnore
		a.count(func(c *StreamStats) { c.Other++ })
	}
}

// frameSIP frames one message at b, which starts at base in the data the
// stream s offered.
func (a *Analyser) frameSIP(st *streamState, meta Meta, b []byte, s *netdecode.Stream, base int) int {
	n, err := FrameLen(b)
	if err != nil {
		a.refuse(err)
		a.count(func(c *StreamStats) { c.Resyncs++ })
		st.mode = modeUnknown
		return len(b)
	}
	if n == 0 {
		return 0
	}
	if !isKeepAlive(b[:n]) {
		a.msgFrames = s.Frames(base, base+n)
		a.message(meta, bytes.TrimLeft(b[:n], "\r\n"))
	}
	return n
}

// handshake consumes an HTTP Upgrade request or 101 response; a stream
// that upgrades to WebSocket then carries SIP in frames.
func (a *Analyser) handshake(st *streamState, b []byte) int {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) > MaxMessage {
			st.mode = modeIgnore
			a.count(func(c *StreamStats) { c.Other++ })
			return len(b)
		}
		return 0
	}
	if bytes.Contains(bytes.ToLower(b[:end]), []byte("websocket")) {
		st.mode = modeWS
		a.count(func(c *StreamStats) { c.WebSocket++ })
	} else {
		st.mode = modeIgnore
		a.count(func(c *StreamStats) { c.Other++ })
	}
	return end + 4
}

// maxWSFrames bounds the frames one WebSocket message remembers for
// export: a MaxMessage message in 64-byte segments.
const maxWSFrames = MaxMessage / 64

// WebSocket opcodes (RFC 6455 §5.2).
const (
	wsContinuation = 0x0
	wsText         = 0x1
	wsBinary       = 0x2
	wsClose        = 0x8
)

// frameWS consumes one WebSocket frame at b (base in the data s offered);
// a complete text or binary message is one SIP message (RFC 7118 §5.2).
func (a *Analyser) frameWS(st *streamState, meta Meta, b []byte, s *netdecode.Stream, base int) int {
	if len(b) < 2 {
		return 0
	}
	fin, op := b[0]&0x80 != 0, b[0]&0x0F
	masked := b[1]&0x80 != 0
	plen, hdr := uint64(b[1]&0x7F), 2
	switch plen {
	case 126:
		if len(b) < 4 {
			return 0
		}
		plen, hdr = uint64(binary.BigEndian.Uint16(b[2:])), 4
	case 127:
		if len(b) < 10 {
			return 0
		}
		plen, hdr = binary.BigEndian.Uint64(b[2:]), 10
	}
	var key []byte
	if masked {
		if len(b) < hdr+4 {
			return 0
		}
		key, hdr = b[hdr:hdr+4], hdr+4
	}
	if plen > MaxMessage {
		a.refuse(perr(ReasonTooLarge, 0))
		st.mode = modeIgnore
		return len(b)
	}
	total := hdr + int(plen)
	if total > len(b) {
		return 0
	}
	payload := b[hdr:total]
	switch op {
	case wsClose:
		st.mode = modeIgnore
		return len(b)
	case wsText, wsBinary, wsContinuation:
		if op != wsContinuation {
			st.ws, st.wsFrames = st.ws[:0], st.wsFrames[:0]
		}
		for _, f := range s.Frames(base, base+total) {
			if n := len(st.wsFrames); (n == 0 || st.wsFrames[n-1] != f) && n < maxWSFrames {
				st.wsFrames = append(st.wsFrames, f)
			}
		}
		if len(st.ws)+len(payload) > MaxMessage {
			a.refuse(perr(ReasonTooLarge, 0))
			st.ws = st.ws[:0]
			return total
		}
		base := len(st.ws)
		st.ws = append(st.ws, payload...)
		if masked {
			for i := range payload {
				st.ws[base+i] ^= key[i&3]
			}
		}
		if fin {
			if LooksLikeSIP(st.ws) {
				a.msgFrames = st.wsFrames
				a.message(meta, st.ws)
			} else if !isKeepAlive(st.ws) {
				a.count(func(c *StreamStats) { c.Other++ })
			}
			st.ws = st.ws[:0]
		}
	}
	return total
}

// readTLS decrypts the whole records at b (base in the data s offered)
// and frames the SIP messages their bytes carry, as frameSIP does for
// clear SIP; the TCP hook sees the records too. A direction that cannot
// be read is counted once, and from then on only the hook reads it.
func (a *Analyser) readTLS(st *streamState, meta Meta, b []byte, s *netdecode.Stream, base int) int {
	n, res := st.tls.Read(b)
	defer a.count(func(c *StreamStats) { c.TLSFlows = a.tls.Stats() })
	if res != tlsdecrypt.Reading {
		st.tls = nil // from here on the records only go to the TCP hook
		if st.sips && !st.tlsSIP {
			a.count(func(c *StreamStats) { c.TLSOnSIPS++ })
		}
		return a.offerTLS(s, meta.Time, b)
	}
	if n > 0 {
		a.offerTLS(s, meta.Time, b[:n]) // whole records: the hook takes them all
	}
	for p := st.tls.Pending(); len(p) > 0; p = st.tls.Pending() {
		if !st.tlsSIP {
			switch {
			case isKeepAlive(p) || LooksLikeSIP(p):
				st.tlsSIP = true
				a.count(func(c *StreamStats) { c.TLSDecrypted++ })
			case bytes.IndexByte(p, '\n') < 0 && len(p) < MaxHeaderLine:
				return n // the first line is not complete yet
			default:
				st.tls = nil // another protocol over TLS
				a.count(func(c *StreamStats) { c.Other++ })
				return n
			}
		}
		m, err := FrameLen(p)
		if err != nil {
			a.refuse(err)
			a.count(func(c *StreamStats) { c.Resyncs++ })
			st.tls.Consume(len(p))
			st.tlsSIP = false
			break
		}
		if m == 0 {
			break
		}
		if !isKeepAlive(p[:m]) {
			a.msgFrames = s.Frames(base, base+n)
			a.message(meta, bytes.TrimLeft(p[:m], "\r\n"))
		}
		st.tls.Consume(m)
	}
	return n
}
