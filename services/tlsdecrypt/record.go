package tlsdecrypt

import (
	"encoding/binary"
	"fmt"
)

// Record content types (RFC 8446 §5.1).
const (
	typeChangeCipherSpec = 20
	typeAlert            = 21
	typeHandshake        = 22
	typeApplicationData  = 23
)

// Handshake message types we act on.
const (
	hsClientHello = 1
	hsServerHello = 2
	hsFinished    = 20
	hsKeyUpdate   = 24
)

const (
	recordHeader = 5
	// maxRecordBody is the largest record body either version allows
	// (TLS 1.2's 2^14+2048 for ciphertext; TLS 1.3's is smaller).
	maxRecordBody = 1<<14 + 2048
)

// Record is one TLS record as framed on the wire.
type Record struct {
	Type    uint8
	Version uint16
	Header  []byte // the 5 header bytes, the TLS 1.3 additional data
	Body    []byte
}

// ParseRecord frames the record at the start of b. It returns the record
// and its length, or n == 0 when b does not hold the whole record yet.
// An error says the bytes are not a TLS record stream.
func ParseRecord(b []byte) (r Record, n int, err error) {
	if len(b) < recordHeader {
		return Record{}, 0, nil
	}
	typ, ver, l := b[0], binary.BigEndian.Uint16(b[1:]), int(binary.BigEndian.Uint16(b[3:]))
	if typ < typeChangeCipherSpec || typ > typeApplicationData {
		return Record{}, 0, fmt.Errorf("tls record: content type %d is not one of 20-23", typ)
	}
	if ver>>8 != 3 {
		return Record{}, 0, fmt.Errorf("tls record: version %#04x is not 3.x", ver)
	}
	if l > maxRecordBody {
		return Record{}, 0, fmt.Errorf("tls record: length %d exceeds %d", l, maxRecordBody)
	}
	if len(b) < recordHeader+l {
		return Record{}, 0, nil
	}
	return Record{Type: typ, Version: ver, Header: b[:recordHeader:recordHeader], Body: b[recordHeader : recordHeader+l : recordHeader+l]}, recordHeader + l, nil
}

// hello is what a ClientHello or ServerHello tells the decryptor.
type hello struct {
	typ    uint8
	random [32]byte
	suite  uint16 // ServerHello only
	tls13  bool   // ServerHello selected TLS 1.3 (supported_versions)
}

// helloRetry is the random of a TLS 1.3 HelloRetryRequest (RFC 8446
// §4.1.3): the real ServerHello follows it.
var helloRetry = [32]byte{
	0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
	0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
}

const extSupportedVersions = 0x002b

// parseHello reads the first handshake message of a plaintext handshake
// record when it is a ClientHello or ServerHello.
func parseHello(b []byte) (hello, error) {
	if len(b) < 4 {
		return hello{}, fmt.Errorf("tls handshake: %d bytes, want a 4-byte message header", len(b))
	}
	h := hello{typ: b[0]}
	if h.typ != hsClientHello && h.typ != hsServerHello {
		return hello{}, fmt.Errorf("tls handshake: message type %d is not a hello", h.typ)
	}
	l := int(b[1])<<16 | int(b[2])<<8 | int(b[3])
	m := b[4:]
	if l > len(m) {
		return hello{}, fmt.Errorf("tls handshake: hello of %d bytes continues past its record (%d)", l, len(m))
	}
	m = m[:l]
	// legacy_version(2) random(32) session_id<0..32>
	if len(m) < 35 {
		return hello{}, fmt.Errorf("tls handshake: hello of %d bytes is too short", len(m))
	}
	copy(h.random[:], m[2:34])
	sid := int(m[34])
	m = m[35:]
	if sid > 32 || len(m) < sid {
		return hello{}, fmt.Errorf("tls handshake: session id length %d", sid)
	}
	m = m[sid:]
	if h.typ == hsClientHello {
		return h, nil
	}
	// cipher_suite(2) compression(1) extensions<0..2^16-1>
	if len(m) < 3 {
		return hello{}, fmt.Errorf("tls handshake: server hello ends before its cipher suite")
	}
	h.suite = binary.BigEndian.Uint16(m)
	m = m[3:]
	if len(m) < 2 {
		return h, nil // no extensions: TLS 1.2 or older
	}
	el := int(binary.BigEndian.Uint16(m))
	m = m[2:]
	if el > len(m) {
		return hello{}, fmt.Errorf("tls handshake: extensions of %d bytes overrun the hello (%d)", el, len(m))
	}
	m = m[:el]
	for len(m) >= 4 {
		typ, n := binary.BigEndian.Uint16(m), int(binary.BigEndian.Uint16(m[2:]))
		if 4+n > len(m) {
			return hello{}, fmt.Errorf("tls handshake: extension %#04x of %d bytes overruns the hello", typ, n)
		}
		if typ == extSupportedVersions && n == 2 && binary.BigEndian.Uint16(m[4:]) == 0x0304 {
			h.tls13 = true
		}
		m = m[4+n:]
	}
	return h, nil
}
