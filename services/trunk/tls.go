package trunk

import (
	"bytes"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"fmt"
	"time"
)

// TLS record content types (RFC 8446 §5.1).
const (
	recChangeCipherSpec = 20
	recAlert            = 21
	recHandshake        = 22
	recApplicationData  = 23
	recHeartbeat        = 24
)

// Handshake message types (RFC 8446 §4).
const (
	hsClientHello = 1
	hsServerHello = 2
	hsCertificate = 11
)

// Extensions read (RFC 6066 §3, RFC 8446 §4.2.1).
const (
	extServerName        = 0
	extSupportedVersions = 43
)

// versionTLS13 is TLS 1.3's version number.
const versionTLS13 = 0x0304

// Bounds on what one flow's handshake may hold.
const (
	// maxRecord is the largest record any TLS version allows
	// (2^14 plus 2048 bytes of expansion, RFC 5246 §6.2.3).
	maxRecord = 1<<14 + 2048
	// maxHandshake bounds one direction's buffered handshake message: a
	// certificate chain past it is not read (Problem says so).
	maxHandshake = 64 << 10
	// maxAlerts bounds the alerts a flow keeps; more are counted.
	maxAlerts = 8
	// maxSNI bounds the server name kept (a DNS name is at most 253).
	maxSNI = 255
)

// helloRetryRandom is the ServerHello random of a HelloRetryRequest
// (RFC 8446 §4.1.3): the real ServerHello is still to come.
var helloRetryRandom = []byte{
	0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
	0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
}

// Alert is one TLS alert a side sent. An alert sent after that side
// began encrypting is seen only as an encrypted alert record.
type Alert struct {
	Time       time.Time
	FromServer bool
	Encrypted  bool
	Level      uint8 // 1 warning, 2 fatal; 0 when encrypted
	Desc       uint8
}

// Certificate is what the server's clear Certificate message (TLS 1.2
// and earlier) shows of its first certificate.
type Certificate struct {
	Subject, Issuer     string // RFC 2253, as openssl x509 -nameopt RFC2253 prints them
	NotBefore, NotAfter time.Time
	// SeenAt is the capture time of the record that completed the
	// message: days to expiry count from it.
	SeenAt time.Time
	Chain  int // certificates in the message
}

// tlsSide is one direction's record parsing.
type tlsSide struct {
	hs        []byte // handshake bytes awaiting a whole message
	ccs       bool   // sent ChangeCipherSpec: its later records are encrypted
	encrypted bool   // sent a record the box cannot read
	gaps      int    // the stream's Gaps when parsing began
	synced    bool
}

// TLSState is what one flow's clear handshake showed.
type TLSState struct {
	ClientHello bool
	ServerHello bool
	HelloRetry  bool   // the server asked for another ClientHello first
	Version     uint16 // negotiated; 0 before a ServerHello
	Cipher      uint16
	SNI         string
	Cert        *Certificate
	Alerts      []Alert
	// AlertsDropped are alerts past maxAlerts, counted.
	AlertsDropped uint64
	// Problem says why parsing stopped early (bytes lost, not TLS, an
	// oversized or malformed message); "" while it runs.
	Problem string

	client, server tlsSide
}

// Completed reports a handshake both sides finished: up to TLS 1.2, each
// side sent ChangeCipherSpec and then an encrypted record (its
// Finished); in TLS 1.3, after the ServerHello both sides sent encrypted
// records, the client's first being its Finished (or an encrypted
// alert, which looks the same without keys).
func (s *TLSState) Completed() bool {
	if !s.ServerHello || !s.client.encrypted || !s.server.encrypted {
		return false
	}
	return s.Version == versionTLS13 || s.client.ccs && s.server.ccs
}

// tls13 reports a negotiated TLS 1.3: everything after the ServerHello
// is encrypted.
func (s *TLSState) tls13() bool { return s.ServerHello && s.Version == versionTLS13 }

// feed parses the records at the start of b from one side and returns
// the bytes consumed: whole records only, unless parsing has stopped.
func (s *TLSState) feed(fromServer bool, gaps int, at time.Time, b []byte) int {
	side := &s.client
	if fromServer {
		side = &s.server
	}
	if !side.synced {
		side.gaps, side.synced = gaps, true
	}
	if s.Problem != "" {
		return len(b)
	}
	if gaps != side.gaps {
		s.Problem = "TCP bytes were lost in the handshake; parsing stopped"
		return len(b)
	}
	done := 0
	for len(b)-done >= 5 {
		r := b[done:]
		typ, major, n := r[0], r[1], int(binary.BigEndian.Uint16(r[3:]))
		if typ < recChangeCipherSpec || typ > recHeartbeat || major != 3 {
			s.Problem = fmt.Sprintf("not a TLS record (content type %d, version %#04x)", typ, binary.BigEndian.Uint16(r[1:]))
			return len(b)
		}
		if n > maxRecord {
			s.Problem = fmt.Sprintf("TLS record of %d bytes, over the %d any version allows", n, maxRecord)
			return len(b)
		}
		if len(r) < 5+n {
			break
		}
		s.record(side, fromServer, at, typ, r[5:5+n])
		done += 5 + n
		if s.Problem != "" {
			return len(b)
		}
	}
	return done
}

// record handles one whole record's body.
func (s *TLSState) record(side *tlsSide, fromServer bool, at time.Time, typ uint8, body []byte) {
	enc := side.ccs || s.tls13() && !(typ == recChangeCipherSpec && !fromServer)
	switch typ {
	case recChangeCipherSpec:
		if !s.tls13() { // TLS 1.3's is for middleboxes only (RFC 8446 §D.4)
			side.ccs = true
		}
	case recAlert:
		a := Alert{Time: at, FromServer: fromServer, Encrypted: enc || len(body) != 2}
		if !a.Encrypted {
			a.Level, a.Desc = body[0], body[1]
		}
		if len(s.Alerts) < maxAlerts {
			s.Alerts = append(s.Alerts, a)
		} else {
			s.AlertsDropped++
		}
	case recHandshake:
		if enc {
			side.encrypted = true
			return
		}
		if len(side.hs)+len(body) > maxHandshake {
			s.Problem = fmt.Sprintf("handshake message over %d bytes; not read", maxHandshake)
			return
		}
		side.hs = append(side.hs, body...)
		side.hs = side.hs[:copy(side.hs, side.hs[s.messages(fromServer, at, side.hs):])]
		if len(side.hs) == 0 {
			side.hs = nil // memory is held only while a message spans records
		}
	case recApplicationData:
		side.encrypted = true
	}
}

// messages parses the whole handshake messages at the start of b and
// returns the bytes they took.
func (s *TLSState) messages(fromServer bool, at time.Time, b []byte) int {
	done := 0
	for len(b)-done >= 4 && s.Problem == "" {
		m := b[done:]
		n := int(m[1])<<16 | int(m[2])<<8 | int(m[3])
		if n > maxHandshake {
			s.Problem = fmt.Sprintf("handshake message of %d bytes, over %d; not read", n, maxHandshake)
			return len(b)
		}
		if len(m) < 4+n {
			break
		}
		body := m[4 : 4+n]
		var err error
		switch {
		case m[0] == hsClientHello && !fromServer:
			err = s.clientHello(body)
		case m[0] == hsServerHello && fromServer:
			err = s.serverHello(body)
		case m[0] == hsCertificate && fromServer && s.Cert == nil:
			err = s.certificate(at, body)
		}
		if err != nil {
			s.Problem = err.Error()
			return len(b)
		}
		done += 4 + n
	}
	return done
}

// reader reads a handshake message's fields, remembering the first
// shortfall.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) bytes(n int) []byte {
	if r.bad || n > len(r.b) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() int { return int(r.uint(1)) }

func (r *reader) uint(n int) uint32 {
	var v uint32
	for _, c := range r.bytes(n) {
		v = v<<8 | uint32(c)
	}
	return v
}

func (r *reader) u16() int { return int(r.uint(2)) }
func (r *reader) u24() int { return int(r.uint(3)) }

// vec reads a vector with an n-byte length prefix.
func (r *reader) vec(n int) []byte { return r.bytes(int(r.uint(n))) }

// clientHello reads the SNI (RFC 8446 §4.1.2, RFC 6066 §3).
func (s *TLSState) clientHello(b []byte) error {
	s.ClientHello = true
	r := reader{b: b}
	r.bytes(2 + 32) // legacy_version, random
	r.vec(1)        // legacy_session_id
	r.vec(2)        // cipher_suites
	r.vec(1)        // legacy_compression_methods
	if r.bad {
		return fmt.Errorf("ClientHello of %d bytes is truncated", len(b))
	}
	if len(r.b) == 0 { // no extensions (SSL 3.0 style)
		return nil
	}
	exts := reader{b: r.vec(2)}
	for len(exts.b) > 0 && !exts.bad {
		typ, data := exts.u16(), exts.vec(2)
		if typ != extServerName || exts.bad {
			continue
		}
		list := reader{b: data}
		names := reader{b: list.vec(2)}
		for len(names.b) > 0 && !names.bad {
			kind, name := names.u8(), names.vec(2)
			if kind == 0 && !names.bad {
				s.SNI = string(name[:min(len(name), maxSNI)])
				break
			}
		}
	}
	if r.bad || exts.bad {
		return fmt.Errorf("ClientHello extensions are malformed")
	}
	return nil
}

// serverHello reads the version and cipher suite (RFC 8446 §4.1.3): the
// supported_versions extension overrides legacy_version.
func (s *TLSState) serverHello(b []byte) error {
	r := reader{b: b}
	version := uint16(r.u16())
	random := r.bytes(32)
	r.vec(1) // legacy_session_id_echo
	cipher := uint16(r.u16())
	r.u8() // legacy_compression_method
	if r.bad {
		return fmt.Errorf("ServerHello of %d bytes is truncated", len(b))
	}
	if len(r.b) > 0 {
		exts := reader{b: r.vec(2)}
		for len(exts.b) > 0 && !exts.bad {
			typ, data := exts.u16(), exts.vec(2)
			if typ == extSupportedVersions && len(data) == 2 {
				version = binary.BigEndian.Uint16(data)
			}
		}
		if r.bad || exts.bad {
			return fmt.Errorf("ServerHello extensions are malformed")
		}
	}
	if bytes.Equal(random, helloRetryRandom) {
		s.HelloRetry = true
		return nil
	}
	s.ServerHello, s.Version, s.Cipher = true, version, cipher
	return nil
}

// certificate reads the first certificate of a TLS 1.2 (or earlier)
// Certificate message (RFC 5246 §7.4.2).
func (s *TLSState) certificate(at time.Time, b []byte) error {
	r := reader{b: b}
	list := reader{b: r.vec(3)}
	if r.bad {
		return fmt.Errorf("certificate message of %d bytes is truncated", len(b))
	}
	var first []byte
	chain := 0
	for len(list.b) > 0 {
		der := list.bytes(list.u24())
		if list.bad {
			return fmt.Errorf("certificate list is truncated after %d certificates", chain)
		}
		if chain == 0 {
			first = der
		}
		chain++
	}
	if chain == 0 {
		return nil // the server sent none
	}
	c, err := x509.ParseCertificate(first)
	if err != nil {
		return fmt.Errorf("server certificate does not parse: %w", err)
	}
	s.Cert = &Certificate{Subject: rdnString(c.RawSubject), Issuer: rdnString(c.RawIssuer), NotBefore: c.NotBefore, NotAfter: c.NotAfter,
		SeenAt: at, Chain: chain}
	return nil
}

// rdnString writes a DER name in RFC 2253 order, its attributes as the
// certificate holds them (pkix.Name.String reorders them by type).
// x509.ParseCertificate has already parsed it.
func rdnString(der []byte) string {
	var rdn pkix.RDNSequence
	if _, err := asn1.Unmarshal(der, &rdn); err != nil {
		return ""
	}
	return rdn.String()
}
