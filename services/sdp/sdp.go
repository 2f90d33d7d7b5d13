package sdp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"net/netip"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"fieldtap/services/heapsize"
)

// Bounds on sender-chosen lists in one body.
const (
	// MaxBody is the largest body parsed; SIP's own message cap is 64 KiB
	// and no real offer comes near it.
	MaxBody = 16 << 10
	// MaxMedia bounds m= sections kept: audio, video, text and a few
	// alternatives is all a real offer carries.
	MaxMedia = 8
	// MaxFormats bounds payload types kept per m= line (RFC 3551 has 35
	// static types; offers list a handful).
	MaxFormats = 32
	// maxValue caps the bytes of one kept attribute value (fmtp, encoding).
	maxValue = 128
	// MaxCrypto bounds a=crypto lines kept per m= section: offers list
	// one per suite they accept, two or three in practice.
	MaxCrypto = 4
	// maxCryptoValue caps one a=crypto value: a key of 40 base64
	// characters with lifetime and MKI, a suite name and parameters fit
	// many times; a longer line is not kept.
	maxCryptoValue = 512
)

// SRTP keying, as Media.SRTP names it.
const (
	KeyingSDES    = "sdes"    // a=crypto (RFC 4568): the key is in the body
	KeyingDTLS    = "dtls"    // DTLS-SRTP (RFC 5763): keys never cross the wire
	KeyingUnknown = "unknown" // RTP/SAVP(F) with neither
)

// Secret is text that holds key material (an a=crypto value). It prints
// as a placeholder, so a value put in a log line or an answer by mistake
// shows no key; code that needs the key converts it with string().
type Secret string

const secretShown = "[secret]"

// String is the placeholder.
func (Secret) String() string { return secretShown }

// GoString is the placeholder, for %#v.
func (Secret) GoString() string { return secretShown }

// MarshalText is the placeholder, for JSON.
func (Secret) MarshalText() ([]byte, error) { return []byte(secretShown), nil }

// Directions (RFC 3264 §5.1). An empty direction means none was written.
const (
	SendRecv = "sendrecv"
	SendOnly = "sendonly"
	RecvOnly = "recvonly"
	Inactive = "inactive"
)

// ErrNotSDP is returned for a body that does not start with v=0.
var ErrNotSDP = errors.New("sdp: body does not start with v=0")

// Format is one payload type of a media line with what a=rtpmap and
// a=fmtp said about it.
type Format struct {
	PT        int
	Encoding  string // from rtpmap, or the static name
	ClockRate int
	Channels  int
	Fmtp      string
}

// Media is one m= section.
type Media struct {
	Type      string // audio, video, …
	Port      int    // 0 means the stream is rejected or disabled
	Proto     string
	Formats   []Format
	Conn      netip.Addr // media-level c=, else the session's
	Direction string
	Ptime     int // ms
	RTCPMux   bool
	RTCPPort  int // a=rtcp, else Port+1 (Port with rtcp-mux)
	// Crypto holds the a=crypto values (RFC 4568 §9.1, after the colon),
	// up to MaxCrypto; services/srtp parses them.
	Crypto []Secret
	// Fingerprint is set when the section or the session carries
	// a=fingerprint: DTLS-SRTP keying (RFC 5763 §5).
	Fingerprint bool
	// texts is the heap the texts Parse copied for the section hold (the
	// package's own names are shared, not copied): Bytes reads it.
	texts int
}

// SRTP names how m's media is keyed when it is SRTP: KeyingSDES with
// a=crypto, KeyingDTLS with a fingerprint or a UDP/TLS profile,
// KeyingUnknown for RTP/SAVP or RTP/SAVPF with neither; "" for RTP.
func (m *Media) SRTP() string {
	switch {
	case len(m.Crypto) > 0:
		return KeyingSDES
	case m.Fingerprint || strings.HasPrefix(m.Proto, "UDP/TLS/"):
		return KeyingDTLS
	case m.Proto == "RTP/SAVP" || m.Proto == "RTP/SAVPF":
		return KeyingUnknown
	}
	return ""
}

// Session is a parsed body.
type Session struct {
	Origin    string     // o= username, session id and version
	Conn      netip.Addr // session-level c=
	Direction string
	Media     []Media
	// fingerprint is a session-level a=fingerprint, applied to every
	// section.
	fingerprint bool
	// Dropped counts m= sections, formats and a=crypto lines past the
	// bounds.
	Dropped int
	texts   int // what the copied o= value holds
}

// Addr is where m expects to receive RTP, or false when it expects none
// (port 0, no address).
func (m *Media) Addr() (netip.AddrPort, bool) {
	if m.Port <= 0 || m.Port > 0xFFFF || !m.Conn.IsValid() {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(m.Conn, uint16(m.Port)), true
}

// Hold reports whether m puts the peer on hold: sendonly, inactive, or the
// RFC 2543 convention of a 0.0.0.0 connection address.
func (m *Media) Hold() bool {
	return m.Direction == SendOnly || m.Direction == Inactive || (m.Conn.IsValid() && m.Conn.IsUnspecified())
}

// Format returns the format with payload type pt.
func (m *Media) Format(pt int) (Format, bool) {
	for _, f := range m.Formats {
		if f.PT == pt {
			return f, true
		}
	}
	return Format{}, false
}

// Parse parses an SDP body. Unknown lines are skipped; a malformed
// m= or c= line is skipped, not fatal, because a box on a mirror port
// reports what endpoints sent rather than rejecting it.
func Parse(b []byte) (*Session, error) {
	b, ok := start(b)
	if !ok {
		return nil, ErrNotSDP
	}
	// The session and its first m= section in one allocation: most
	// bodies carry a single audio section.
	sa := &struct {
		s     Session
		media [1]Media
	}{}
	s := &sa.s
	var cur *Media
	mediaConn := false
	for len(b) > 0 {
		var line []byte
		if line, b = nextLine(b); len(line) < 2 || line[1] != '=' {
			continue
		}
		v := line[2:]
		switch line[0] {
		case 'o':
			var buf [maxValue]byte
			if o, ok := originOf(&buf, v); ok {
				s.Origin = string(o)
				s.texts += heapsize.String(s.Origin)
			}
		case 'c':
			a, ok := parseConn(v)
			if !ok {
				continue
			}
			if cur != nil {
				cur.Conn, mediaConn = a, true
			} else {
				s.Conn = a
			}
		case 'm':
			s.finish(cur, mediaConn)
			cur, mediaConn = nil, false
			typ, port, proto, fmts, ok := mediaLine(v)
			if !ok {
				continue
			}
			if len(s.Media) >= MaxMedia {
				s.Dropped++
				// Attributes of a dropped section must not land on the
				// previous one: park them in a scratch section.
				cur = &Media{}
			} else {
				// Filled in place: a Media is too big to copy per section,
				// and sa's is zero already.
				if s.Media == nil {
					s.Media = sa.media[:1:1] // nil while the body has no section, as before
				} else {
					s.Media = append(s.Media, Media{})
				}
				cur = &s.Media[len(s.Media)-1]
			}
			cur.Type, cur.Port, cur.Proto = known(typ, mediaTypes, &cur.texts), port, known(proto, protos, &cur.texts)
			cur.Formats = formats(fmts, &s.Dropped)
		case 'a':
			s.attr(cur, v)
		}
	}
	s.finish(cur, mediaConn)
	return s, nil
}

// start is the body Parse reads: at most MaxBody bytes, from its first
// byte that is not a line break or a blank, and whether that is v=.
func start(b []byte) ([]byte, bool) {
	if len(b) > MaxBody {
		b = b[:MaxBody]
	}
	for len(b) > 0 && (b[0] == '\r' || b[0] == '\n' || b[0] == ' ' || b[0] == '\t') {
		b = b[1:] // bytes.TrimLeft would build its set of four bytes per body
	}
	return b, bytes.HasPrefix(b, []byte("v="))
}

// nextLine splits b's first line off, without its line break and
// trailing blanks.
func nextLine(b []byte) (line, rest []byte) {
	if i := lineEnd(b); i < len(b) {
		line, rest = b[:i], b[i+1:]
	} else {
		line = b
	}
	for n := len(line); n > 0 && (line[n-1] == '\r' || line[n-1] == ' ' || line[n-1] == '\t'); n-- {
		line = line[:n-1]
	}
	return line, rest
}

// lineEnd is bytes.IndexByte(b, '\n'), or len(b) without one, eight
// bytes at a time: SDP lines are short, and calling the vector search
// for each costs more than the search.
func lineEnd(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:]) ^ '\n'*ones
		// The lowest high bit set marks the first zero byte of x.
		if z := (x - ones) &^ x & highs; z != 0 {
			return i + bits.TrailingZeros64(z)/8
		}
	}
	for i < len(b) && b[i] != '\n' {
		i++
	}
	return i
}

// SameOrigin reports whether Parse would accept b and give it origin as
// its Origin, without parsing the rest or allocating: a retransmitted
// INVITE or 200 repeats its body, o= line and all, and a caller that has
// the earlier body's Origin can tell the repeat before parsing it.
func SameOrigin(b []byte, origin string) bool {
	b, ok := start(b)
	if !ok || origin == "" {
		return false
	}
	// Parse keeps the last o= line of three fields or more: every one
	// counts. b starts with v=, so each o= line follows a line break:
	// found by a scan of the whole body, not split off line by line.
	var buf [maxValue]byte
	same := false
	for i := originLine(b); i >= 0; {
		line, _ := nextLine(b[i+1:])
		if o, ok := originOf(&buf, line[2:]); ok {
			same = string(o) == origin
		}
		b = b[i+1+len(line):]
		i = originLine(b)
	}
	return same
}

// originLine is the index of b's first line break followed by "o=", or
// -1, found eight bytes at a time as lineEnd finds one.
func originLine(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:]) ^ '\n'*ones
		// Past the first, a marked byte may be a '\v' after a line
		// break: each is checked.
		for z := (x - ones) &^ x & highs; z != 0; z &= z - 1 {
			if j := i + bits.TrailingZeros64(z)/8; j+2 < len(b) && b[j] == '\n' && b[j+1] == 'o' && b[j+2] == '=' {
				return j
			}
		}
	}
	for ; i+2 < len(b); i++ {
		if b[i] == '\n' && b[i+1] == 'o' && b[i+2] == '=' {
			return i
		}
	}
	return -1
}

// finish applies session-level defaults to a completed m= section.
func (s *Session) finish(m *Media, hasConn bool) {
	if m == nil {
		return
	}
	if !hasConn {
		m.Conn = s.Conn
	}
	if m.Direction == "" {
		m.Direction = s.Direction
	}
	m.Fingerprint = m.Fingerprint || s.fingerprint
	if m.Direction == "" {
		m.Direction = SendRecv // RFC 3264 §5.1 default
	}
	if m.RTCPPort == 0 && m.Port > 0 {
		m.RTCPPort = m.Port + 1 // RFC 3550 §11
		if m.RTCPMux {
			m.RTCPPort = m.Port
		}
	}
}

func (s *Session) attr(m *Media, v []byte) {
	name, val, _ := cut(v, ':')
	switch string(name) {
	case SendRecv, SendOnly, RecvOnly, Inactive:
		dir := direction(name)
		if m != nil {
			m.Direction = dir
		} else {
			s.Direction = dir
		}
	case "crypto":
		switch val = trim(val); {
		case m == nil: // RFC 4568 §9.1: media level only
		case len(m.Crypto) >= MaxCrypto || len(val) > maxCryptoValue:
			s.Dropped++
		default:
			m.Crypto = append(m.Crypto, Secret(val))
			m.texts += heapsize.Bytes(len(val))
		}
	case "fingerprint":
		if m != nil {
			m.Fingerprint = true
		} else {
			s.fingerprint = true
		}
	case "rtcp-mux":
		if m != nil {
			m.RTCPMux = true
		}
	case "rtcp":
		if m != nil {
			if p, ok := atoi(firstField(val)); ok && p > 0 && p <= 0xFFFF {
				m.RTCPPort = p
			}
		}
	case "ptime":
		if m != nil {
			if p, ok := atoi(trim(val)); ok && p > 0 && p <= 1000 {
				m.Ptime = p
			}
		}
	case "rtpmap":
		if m != nil {
			rtpmap(m, trim(val))
		}
	case "fmtp":
		if m != nil {
			pt, rest := splitPT(trim(val))
			if f := m.formatRef(pt); f != nil {
				f.Fmtp = known(trim(rest), fmtps, &m.texts)
			}
		}
	}
}

// rtpmap applies "<pt> <encoding>/<clock>[/<channels>]".
func rtpmap(m *Media, val []byte) {
	pt, rest := splitPT(val)
	f := m.formatRef(pt)
	if f == nil {
		return
	}
	enc, rest, more := cut(trim(rest), '/')
	f.Encoding = known(enc, encodings, &m.texts)
	if more {
		clock, channels, hasChannels := cut(rest, '/')
		if c, ok := atoi(clock); ok {
			f.ClockRate = c
		}
		if hasChannels {
			channels, _, _ = cut(channels, '/')
			if c, ok := atoi(channels); ok {
				f.Channels = c
			}
		}
	}
}

// cut is bytes.Cut at a byte: the pieces it splits are a few bytes
// long, shorter than it takes to set bytes.Cut's vector search up.
func cut(b []byte, sep byte) (before, after []byte, found bool) {
	for i, c := range b {
		if c == sep {
			return b[:i], b[i+1:], true
		}
	}
	return b, nil, false
}

// trim is bytes.TrimSpace with ASCII ends, as values have, trimmed
// without its call; other ends are left to it.
func trim(b []byte) []byte {
	for len(b) > 0 && kind[b[0]] == spaceByte {
		b = b[1:]
	}
	for len(b) > 0 && kind[b[len(b)-1]] == spaceByte {
		b = b[:len(b)-1]
	}
	if len(b) > 0 && (kind[b[0]] == wideByte || kind[b[len(b)-1]] == wideByte) {
		return bytes.TrimSpace(b)
	}
	return b
}

func (m *Media) formatRef(pt int) *Format {
	for i := range m.Formats {
		if m.Formats[i].PT == pt {
			return &m.Formats[i]
		}
	}
	return nil
}

func splitPT(v []byte) (int, []byte) {
	i := 0
	for i < len(v) && v[i] != ' ' && v[i] != '\t' {
		i++
	}
	if i == len(v) {
		return -1, nil
	}
	pt, ok := atoi(v[:i])
	if !ok {
		return -1, nil
	}
	return pt, v[i+1:]
}

// mediaLine splits "<type> <port>[/<n>] <proto> <fmt> ..." into its
// fields, the formats left unsplit; it is false for a malformed line.
func mediaLine(v []byte) (typ []byte, port int, proto, fmts []byte, ok bool) {
	typ, v = nextField(v)
	portField, v := nextField(v)
	proto, fmts = nextField(v)
	if len(proto) == 0 {
		return nil, 0, nil, nil, false
	}
	portField, _, _ = cut(portField, '/')
	port, ok = atoi(portField)
	if !ok || port > 0xFFFF {
		return nil, 0, nil, nil, false
	}
	return typ, port, proto, fmts, true
}

// formats is an m= line's RTP payload types, with the static ones
// named. Its capacity counts every format field, up to MaxFormats.
func formats(v []byte, dropped *int) []Format {
	var pts [MaxFormats]uint8
	n, fields := 0, 0
	for p, rest := nextField(v); len(p) > 0; p, rest = nextField(rest) {
		fields++
		pt, ok := atoi(p)
		if !ok || pt > 127 {
			continue // non-RTP formats (e.g. "*" or a MIME type) are not ours
		}
		if n >= MaxFormats {
			*dropped++
			continue
		}
		pts[n] = uint8(pt)
		n++
	}
	fs := make([]Format, n, min(fields, MaxFormats))
	for i, pt := range pts[:n] {
		// Field by field: fs is zero, and a whole Format written would
		// be zeroed again first.
		st, _ := Static(int(pt))
		fs[i].PT, fs[i].Encoding, fs[i].ClockRate = int(pt), st.Encoding, st.ClockRate
	}
	return fs
}

// parseConn parses "IN IP4 <addr>[/ttl[/n]]" or "IN IP6 <addr>".
func parseConn(v []byte) (netip.Addr, bool) {
	in, v := nextField(v)
	_, v = nextField(v)
	a, _ := nextField(v)
	if len(a) == 0 || string(in) != "IN" {
		return netip.Addr{}, false
	}
	a, _, _ = cut(a, '/')
	if ip, ok := ipv4(a); ok {
		return netip.AddrFrom4(ip), true
	}
	addr, err := netip.ParseAddr(string(a))
	if err != nil {
		return netip.Addr{}, false
	}
	return addr.Unmap(), true
}

// ipv4 parses the dotted quad netip.ParseAddr accepts (four decimal
// fields of 1 to 3 digits, at most 255, no leading zero) without the
// string ParseAddr needs, which escapes into its error: nearly every c=
// line carries one. Anything else is left to ParseAddr.
func ipv4(b []byte) (ip [4]byte, ok bool) {
	field, n, digits := 0, 0, 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if digits > 0 && n == 0 || digits == 3 {
				return ip, false // a leading zero, or a fourth digit
			}
			n = n*10 + int(c-'0')
			digits++
			if n > 255 {
				return ip, false
			}
		case c == '.' && digits > 0 && field < 3:
			ip[field] = byte(n)
			field, n, digits = field+1, 0, 0
		default:
			return ip, false
		}
	}
	if field != 3 || digits == 0 {
		return ip, false
	}
	ip[3] = byte(n)
	return ip, true
}

// atoi is strconv.Atoi of at most 9 bytes, kept only when not negative:
// an optional sign, then decimal digits. Written out, it neither converts
// b to a string nor builds an error for a field that is not a number.
func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	neg := false
	switch b[0] {
	case '+', '-':
		neg, b = b[0] == '-', b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, !neg || n == 0
}

// nextField splits b's first field off as bytes.Fields splits (a field
// is what lies between Unicode spaces), without the slice bytes.Fields
// builds; the field is empty when b has none. Bodies are ASCII: a byte
// of a wider rune sends the whole split to the rune-decoding path.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && kind[b[i]] == spaceByte {
		i++
	}
	j := i
	for j < len(b) && kind[b[j]] == fieldByte {
		j++
	}
	if j < len(b) && kind[b[j]] == wideByte {
		i = skip(b, true)
		j = i + skip(b[i:], false)
	}
	return b[i:j], b[j:]
}

// Byte kinds for nextField.
const (
	fieldByte = iota
	spaceByte // the ASCII spaces of unicode.IsSpace
	wideByte  // part of a multi-byte rune, which may be a space
)

var kind = func() (t [256]uint8) {
	for _, c := range "\t\n\v\f\r " {
		t[c] = spaceByte
	}
	for c := utf8.RuneSelf; c < len(t); c++ {
		t[c] = wideByte
	}
	return t
}()

// skip is how many of b's leading bytes are Unicode spaces, or are not.
func skip(b []byte, spaces bool) int {
	i := 0
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if unicode.IsSpace(r) != spaces {
			return i
		}
		i += n
	}
	return i
}

// firstField is b's first field, as bytes.Fields splits it.
func firstField(b []byte) []byte {
	f, _ := nextField(b)
	return f
}

// originOf is an o= value's "user id version", clipped to maxValue
// bytes: its first three fields joined by single spaces, whatever blanks
// separate them; the text they span when that is it, as senders write
// it, else a copy in buf. It is false for a value of fewer than three
// fields.
func originOf(buf *[maxValue]byte, v []byte) ([]byte, bool) {
	user, r := nextField(v)
	start := len(v) - len(r) - len(user)
	id, r := nextField(r)
	version, r := nextField(r)
	if len(version) == 0 {
		return nil, false
	}
	end := len(v) - len(r)
	if end-start == len(user)+len(id)+len(version)+2 && v[start+len(user)] == ' ' && v[end-len(version)-1] == ' ' {
		return v[start:min(end, start+maxValue)], true
	}
	n := copy(buf[:], user) // copy stops at maxValue, as known's does
	n += copy(buf[n:], " ")
	n += copy(buf[n:], id)
	n += copy(buf[n:], " ")
	n += copy(buf[n:], version)
	return buf[:n], true
}

// The values bodies repeat, kept as the package's own strings so a parse
// does not allocate them again.
var (
	mediaTypes = []string{"audio", "video", "text", "application", "message", "image"}
	protos     = []string{"RTP/AVP", "RTP/SAVP", "RTP/AVPF", "RTP/SAVPF", "UDP/TLS/RTP/SAVPF", "UDP/TLS/RTP/SAVP", "udp", "TCP/MSRP", "UDPTL"}
	// fmtps are telephone-event's event ranges (RFC 4733 §2.4.1) and
	// G.729's annex B switch.
	fmtps     = []string{"0-15", "0-16", "0-11", "0-15,66,70", "annexb=no", "annexb=yes"}
	encodings = []string{"PCMU", "PCMA", "telephone-event", "G722", "G729", "GSM", "opus", "AMR", "AMR-WB", "iLBC", "speex", "G726-32", "L16", "CN", "H264", "VP8", "VP9"}
)

// known returns b as one of list's strings when it is one, else a copy
// of its first maxValue bytes, clipped before the copy so the session
// holds no more than it keeps, whose heap it adds to *texts.
func known(b []byte, list []string, texts *int) string {
	for _, v := range list {
		if string(b) == v {
			return v
		}
	}
	s := string(b[:min(len(b), maxValue)])
	*texts += heapsize.String(s)
	return s
}

func direction(b []byte) string {
	switch string(b) {
	case SendRecv:
		return SendRecv
	case SendOnly:
		return SendOnly
	case RecvOnly:
		return RecvOnly
	}
	return Inactive
}

// Bytes is what s holds in the heap, for a memory budget: the session
// with its first section (one allocation), a larger sections' array,
// each section's formats and a=crypto arrays and the texts Parse copied
// (the package's own names, PCMU or RTP/AVP, are shared and cost none).
func (s *Session) Bytes() int {
	n := heapsize.Pointers(int(unsafe.Sizeof(struct {
		s     Session
		media [1]Media
	}{})))
	if cap(s.Media) > 1 {
		n += heapsize.Pointers(cap(s.Media) * int(unsafe.Sizeof(Media{})))
	}
	n += s.texts
	for i := range s.Media {
		n += s.Media[i].Bytes()
	}
	return n
}

// Bytes is what m holds in the heap beyond the Media itself: its
// formats' and a=crypto arrays and the texts Parse copied for it (a
// repeated a=rtpmap or a=fmtp counted each time). A copy of m shares
// them.
func (m *Media) Bytes() int {
	return heapsize.Pointers(cap(m.Formats)*int(unsafe.Sizeof(Format{}))) + heapsize.Pointers(cap(m.Crypto)*int(unsafe.Sizeof(Secret("")))) + m.texts
}
