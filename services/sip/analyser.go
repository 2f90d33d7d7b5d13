package sip

import (
	"bytes"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/batchlock"
	"fieldtap/services/netdecode"
	"fieldtap/services/tlsdecrypt"
)

// Transports as stored in Meta.Transport.
const (
	TransportUDP = "udp"
	TransportTCP = "tcp"
	TransportWS  = "ws"
	TransportTLS = "tls" // decrypted from TLS records with logged keys
)

// StreamStats count TCP streams by what they carried.
type StreamStats struct {
	SIP       uint64
	WebSocket uint64
	// TLS streams carry encrypted records: read when their session's keys
	// were logged (SetTLSKeys), else counted; the TCP hook sees the clear
	// handshake either way (trunk health).
	TLS         uint64
	TLSSessions uint64 // ClientHellos seen
	// TLSOnSIPS are the TLS streams to or from 5061, the SIPS port
	// (RFC 3261 §26.2), that gave no SIP: SIP the box saw and could not
	// read (no keys, a suite not read, bytes lost).
	TLSOnSIPS uint64
	// TLSDecrypted are the TLS streams whose decrypted bytes were SIP.
	TLSDecrypted uint64
	// TLSFlows is what the TLS decryptor did, by flow and record;
	// TLSKeys what its key store holds.
	TLSFlows     tlsdecrypt.Stats
	TLSKeys      tlsdecrypt.KeyStats
	Other        uint64 // neither SIP, WebSocket nor TLS
	Resyncs      uint64 // framing lost and searched for again
	UDPNotSIP    uint64 // datagrams that were not SIP (RTP, DNS, …)
	KeepAlives   uint64 // CRLF keep-alives (RFC 5626)
	Undecodable  uint64 // SIP-looking messages refused; reasons in the store
	DecodePanics uint64
}

// sink is where an analyser puts what it decodes: the Store, or an
// export's selection (export_scan.go).
type sink interface {
	Add(meta Meta, m *Parsed, raw []byte)
	Undecodable(reason string)
}

// Analyser decodes frames of one port into the store. Feed runs on the
// port's consumer goroutine; Stats may be read from any.
type Analyser struct {
	store sink
	dec   *netdecode.Decoder
	msg   Parsed
	mu    batchlock.Mutex // the feeder's counts take it with FeedLock (Hold)
	st    StreamStats
	media MediaHook // mediahook.go; nil when no media analyser is attached
	tap   Tap       // tap.go; nil unless an exporter is on
	// tcpHook sees TCP segments and TLS streams (tcphook.go); nil unless
	// trunk health is wired.
	tcpHook TCPHook
	// msgFrames are the tags of the frames that carried the message being
	// added, with netdecode.Options.TrackFrames (export_scan.go).
	msgFrames []uint64
	tls       *tlsdecrypt.Flows // nil: TLS is counted, not read
}

// SetTLSKeys makes the analyser decrypt TLS streams whose sessions keys
// holds, following at most lim's flows; call it before the first Feed.
func (a *Analyser) SetTLSKeys(keys *tlsdecrypt.Keys, lim tlsdecrypt.Limits) {
	a.tls = tlsdecrypt.NewFlows(keys, lim)
}

// NewAnalyser returns an analyser feeding store.
func NewAnalyser(store *Store, o netdecode.Options) *Analyser { return newAnalyser(store, o) }

func newAnalyser(s sink, o netdecode.Options) *Analyser {
	a := &Analyser{store: s}
	a.dec = netdecode.New(o, a)
	return a
}

// Feed decodes one captured frame. data is borrowed for the call. A
// decoder panic is counted, never propagated to the port.
func (a *Analyser) Feed(t time.Time, link wire.LinkType, data []byte) {
	a.feedTagged(0, t, link, data)
}

// feedTagged is Feed for a frame an export names by tag.
func (a *Analyser) feedTagged(tag uint64, t time.Time, link wire.LinkType, data []byte) {
	defer func() {
		if p := recover(); p != nil {
			a.count(func(s *StreamStats) { s.DecodePanics++ })
			a.store.Undecodable(ReasonPanic)
		}
	}()
	a.dec.DecodeTagged(tag, t, link, data)
}

// Stats returns the analyser's stream counters and the decoder's.
func (a *Analyser) Stats() (StreamStats, netdecode.Stats) {
	a.mu.Lock()
	s := a.st
	a.mu.Unlock()
	if a.tls != nil {
		s.TLSKeys = a.tls.KeyStats()
	}
	return s, a.dec.Stats()
}

// Tunnels is the decoder's Tunnels: read it only on the goroutine that
// feeds, between Feed calls.
func (a *Analyser) Tunnels() netdecode.TunnelCounts { return a.dec.Tunnels() }

func (a *Analyser) count(fn func(s *StreamStats)) {
	a.mu.FeedLock()
	fn(&a.st)
	a.mu.FeedUnlock()
}

// Hold keeps, for a batch of Feed calls on the feeding goroutine until
// Release, the locks a frame would take one by one: the analyser's
// counters', its decoder's, and its media hook's when that is a Holder.
// Stats and the media hook's readers wait meanwhile.
func (a *Analyser) Hold() {
	a.mu.Hold()
	a.dec.Hold()
	if h, ok := a.media.(Holder); ok {
		h.Hold()
	}
}

// Release ends Hold.
func (a *Analyser) Release() {
	if h, ok := a.media.(Holder); ok {
		h.Release()
	}
	a.dec.Release()
	a.mu.Release()
}

// UDP implements netdecode.Handler.
func (a *Analyser) UDP(d *netdecode.Datagram) {
	p := d.Payload
	if isKeepAlive(p) {
		a.count(func(s *StreamStats) { s.KeepAlives++ })
		return
	}
	sip, err := a.msg.parseDatagram(p)
	if !sip {
		a.mediaDatagram(d)
		a.count(func(s *StreamStats) { s.UDPNotSIP++ })
		return
	}
	a.msgFrames = d.Frames
	a.parsed(Meta{Time: d.Time, Src: d.Src, Dst: d.Dst, Transport: TransportUDP}, p, err)
}

// parseDatagram parses p as a message when it may be one. sip says
// whether p is SIP, as LooksLikeSIP decides: a datagram whose first byte
// cannot start a start line is not, and every start line Parse accepts
// LooksLikeSIP accepts too (but one whose SIP/2.0 matched only under
// Unicode's case fold), so LooksLikeSIP, which reads the first line
// again, runs only for a datagram Parse refuses. err is Parse's when
// p is SIP.
func (m *Parsed) parseDatagram(p []byte) (sip bool, err error) {
	i := 0
	for i < len(p) && (p[i] == '\r' || p[i] == '\n') {
		i++
	}
	if i == len(p) || !tokenChar[p[i]] {
		return false, nil // RTP and most other traffic: its first byte is 0x80 or above
	}
	err = m.Parse(p)
	if (err != nil || m.foldedVersion) && !LooksLikeSIP(p) {
		return false, nil
	}
	return true, err
}

// message parses and stores one complete message.
func (a *Analyser) message(meta Meta, b []byte) {
	a.parsed(meta, b, a.msg.Parse(b))
}

// parsed stores the message a.msg holds, parsed from b with err.
func (a *Analyser) parsed(meta Meta, b []byte, err error) {
	if err != nil {
		a.refuse(err)
		return
	}
	if err := a.msg.Validate(); err != nil {
		a.refuse(err)
		return
	}
	a.store.Add(meta, &a.msg, b[:a.msg.Size])
	if a.tap != nil {
		a.tap.Message(meta, b[:a.msg.Size])
	}
	a.mediaMessage(meta)
}

func (a *Analyser) refuse(err error) {
	reason := ReasonStartLine
	if pe, ok := err.(*ParseError); ok {
		reason = pe.Reason
	}
	a.count(func(s *StreamStats) { s.Undecodable++ })
	a.store.Undecodable(reason)
}

// isKeepAlive reports a CRLF keep-alive: only CR and LF bytes. It runs on
// every datagram, so it looks at bytes, not at a trimmed copy.
func isKeepAlive(p []byte) bool {
	for _, c := range p {
		if c != '\r' && c != '\n' {
			return false
		}
	}
	return len(p) > 0
}

// equalFoldASCII is bytes.EqualFold for an ASCII pattern: a datagram of
// RTP is mostly bytes above 0x7F, which send bytes.EqualFold down its
// Unicode path on every packet.
func equalFoldASCII[P string | []byte](b []byte, pattern P) bool {
	if len(b) != len(pattern) {
		return false
	}
	for i, c := range b {
		p := pattern[i]
		if c == p {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= p && p <= 'Z' {
			p += 'a' - 'A'
		}
		if c != p {
			return false
		}
	}
	return true
}

// LooksLikeSIP is a cheap test that b starts like a SIP message: "SIP/2.0 "
// or a token method followed by a URI with a scheme, and a first line
// ending in SIP/2.0. It decides only whether a failure to parse counts as
// undecodable SIP rather than other traffic.
func LooksLikeSIP(b []byte) bool {
	for len(b) > 0 && (b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	if len(b) >= 8 && equalFoldASCII(b[:8], []byte("SIP/2.0 ")) {
		return true
	}
	// A method is a token: RTP (first byte 0x80 or above) is turned away
	// here, before a search for the end of its first line.
	if len(b) == 0 || !tokenChar[b[0]] {
		return false
	}
	line := b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		line = b[:i]
	} else if len(line) > MaxHeaderLine {
		return false
	}
	line = bytes.TrimRight(line, "\r")
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 || !isToken(line[:sp]) {
		return false
	}
	return len(line) > len(sipVersion) && equalFoldASCII(line[len(line)-len(sipVersion):], sipVersion)
}
