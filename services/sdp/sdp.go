package sdp

import (
	"bytes"
	"errors"
	"net/netip"
	"strconv"
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
)

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
	PT        int    `json:"pt"`
	Encoding  string `json:"encoding,omitempty"` // from rtpmap, or the static name
	ClockRate int    `json:"clock_rate,omitempty"`
	Channels  int    `json:"channels,omitempty"`
	Fmtp      string `json:"fmtp,omitempty"`
}

// Media is one m= section.
type Media struct {
	Type      string     `json:"type"` // audio, video, …
	Port      int        `json:"port"` // 0 means the stream is rejected or disabled
	Proto     string     `json:"proto"`
	Formats   []Format   `json:"formats"`
	Conn      netip.Addr `json:"conn"` // media-level c=, else the session's
	Direction string     `json:"direction"`
	Ptime     int        `json:"ptime,omitempty"` // ms
	RTCPMux   bool       `json:"rtcp_mux"`
	RTCPPort  int        `json:"rtcp_port"` // a=rtcp, else Port+1 (Port with rtcp-mux)
}

// Session is a parsed body.
type Session struct {
	Origin    string     `json:"origin,omitempty"` // o= username, session id and version
	Conn      netip.Addr `json:"conn"`             // session-level c=
	Direction string     `json:"direction,omitempty"`
	Media     []Media    `json:"media"`
	// Dropped counts m= sections and formats past the bounds.
	Dropped int `json:"dropped,omitempty"`
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
	if len(b) > MaxBody {
		b = b[:MaxBody]
	}
	b = bytes.TrimLeft(b, "\r\n \t")
	if !bytes.HasPrefix(b, []byte("v=")) {
		return nil, ErrNotSDP
	}
	s := &Session{}
	var cur *Media
	mediaConn := false
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		line = bytes.TrimRight(line, "\r \t")
		if len(line) < 2 || line[1] != '=' {
			continue
		}
		v := line[2:]
		switch line[0] {
		case 'o':
			f := bytes.Fields(v)
			if len(f) >= 3 {
				s.Origin = clip(string(f[0]) + " " + string(f[1]) + " " + string(f[2]))
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
			m, ok := parseMediaLine(v, &s.Dropped)
			if !ok {
				continue
			}
			if len(s.Media) >= MaxMedia {
				s.Dropped++
				// Attributes of a dropped section must not land on the
				// previous one: park them in a scratch section.
				cur = &Media{}
				continue
			}
			s.Media = append(s.Media, m)
			cur = &s.Media[len(s.Media)-1]
		case 'a':
			s.attr(cur, v)
		}
	}
	s.finish(cur, mediaConn)
	return s, nil
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
	name, val := v, []byte(nil)
	if i := bytes.IndexByte(v, ':'); i >= 0 {
		name, val = v[:i], bytes.TrimSpace(v[i+1:])
	}
	switch string(name) {
	case SendRecv, SendOnly, RecvOnly, Inactive:
		if m != nil {
			m.Direction = string(name)
		} else {
			s.Direction = string(name)
		}
	case "rtcp-mux":
		if m != nil {
			m.RTCPMux = true
		}
	case "rtcp":
		if m != nil {
			if f := bytes.Fields(val); len(f) > 0 {
				if p, ok := atoi(f[0]); ok && p > 0 && p <= 0xFFFF {
					m.RTCPPort = p
				}
			}
		}
	case "ptime":
		if m != nil {
			if p, ok := atoi(val); ok && p > 0 && p <= 1000 {
				m.Ptime = p
			}
		}
	case "rtpmap":
		if m != nil {
			rtpmap(m, val)
		}
	case "fmtp":
		if m != nil {
			pt, rest := splitPT(val)
			if f := m.formatRef(pt); f != nil {
				f.Fmtp = clip(string(bytes.TrimSpace(rest)))
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
	parts := bytes.Split(bytes.TrimSpace(rest), []byte("/"))
	f.Encoding = clip(string(parts[0]))
	if len(parts) > 1 {
		if c, ok := atoi(parts[1]); ok {
			f.ClockRate = c
		}
	}
	if len(parts) > 2 {
		if c, ok := atoi(parts[2]); ok {
			f.Channels = c
		}
	}
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
	i := bytes.IndexAny(v, " \t")
	if i < 0 {
		return -1, nil
	}
	pt, ok := atoi(v[:i])
	if !ok {
		return -1, nil
	}
	return pt, v[i+1:]
}

// parseMediaLine parses "<type> <port>[/<n>] <proto> <fmt> ...".
func parseMediaLine(v []byte, dropped *int) (Media, bool) {
	f := bytes.Fields(v)
	if len(f) < 3 {
		return Media{}, false
	}
	portField := f[1]
	if i := bytes.IndexByte(portField, '/'); i >= 0 {
		portField = portField[:i]
	}
	port, ok := atoi(portField)
	if !ok || port > 0xFFFF {
		return Media{}, false
	}
	m := Media{Type: clip(string(f[0])), Port: port, Proto: clip(string(f[2])), Formats: []Format{}}
	for _, p := range f[3:] {
		pt, ok := atoi(p)
		if !ok || pt > 127 {
			continue // non-RTP formats (e.g. "*" or a MIME type) are not ours
		}
		if len(m.Formats) >= MaxFormats {
			*dropped++
			continue
		}
		fm := Format{PT: pt}
		if st, ok := Static(pt); ok {
			fm.Encoding, fm.ClockRate = st.Encoding, st.ClockRate
		}
		m.Formats = append(m.Formats, fm)
	}
	return m, true
}

// parseConn parses "IN IP4 <addr>[/ttl[/n]]" or "IN IP6 <addr>".
func parseConn(v []byte) (netip.Addr, bool) {
	f := bytes.Fields(v)
	if len(f) < 3 || string(f[0]) != "IN" {
		return netip.Addr{}, false
	}
	a := f[2]
	if i := bytes.IndexByte(a, '/'); i >= 0 {
		a = a[:i]
	}
	addr, err := netip.ParseAddr(string(a))
	if err != nil {
		return netip.Addr{}, false
	}
	return addr.Unmap(), true
}

func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(string(b))
	return n, err == nil && n >= 0
}

func clip(s string) string {
	if len(s) > maxValue {
		return s[:maxValue]
	}
	return s
}
