package srtp

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Suite is an SRTP crypto suite name as RFC 4568 §6.2 registers it.
type Suite string

// The suites Unprotect reads.
const (
	AESCM128SHA1_80 Suite = "AES_CM_128_HMAC_SHA1_80"
	AESCM128SHA1_32 Suite = "AES_CM_128_HMAC_SHA1_32"
)

// TagLen is the suite's authentication tag in bytes (80 or 32 bits).
func (s Suite) TagLen() int {
	if s == AESCM128SHA1_32 {
		return 4
	}
	return 10
}

// maxMKILen is RFC 4568 §9.2's bound on an MKI's length in bytes.
const maxMKILen = 128

// Key is the first key of an a=crypto line: its master key and salt, and
// the length of the MKI its packets carry. The key material is a secret:
// no method prints it.
type Key struct {
	Tag    int
	Suite  Suite
	MKILen int
	// material is the master key then the master salt.
	material [masterKeyLen + masterSaltLen]byte
}

// String names the key's suite, never its material.
func (k Key) String() string {
	return fmt.Sprintf("srtp key (tag %d, %s, material redacted)", k.Tag, k.Suite)
}

// GoString is String, so %#v prints no material either.
func (k Key) GoString() string { return k.String() }

// MarshalText is String: a key put into JSON by mistake shows no material.
func (k Key) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Errors of ParseCrypto; the key material is never part of an error.
var (
	ErrCryptoSyntax = errors.New("srtp: a=crypto is not \"<tag> <suite> inline:<key>\"")
	ErrKeyMethod    = errors.New("srtp: a=crypto key method is not inline (RFC 4568 §6.1)")
	ErrKeyLength    = errors.New("srtp: a=crypto inline key is not 30 bytes of base64 (16-byte key, 14-byte salt)")
)

// UnsupportedError names what of a well-formed a=crypto line the box does
// not read.
type UnsupportedError struct{ What string }

func (e *UnsupportedError) Error() string { return "srtp: a=crypto " + e.What + " is not read here" }

// ParseCrypto parses an a=crypto value (after "a=crypto:"), RFC 4568
// §9.1: "<tag> <suite> inline:<key||salt base64>[|<lifetime>][|<mki>:<len>]
// [;inline:…] [<session params>]". Only the first key is kept: with more
// than one, packets choose by MKI, and senders rekey with a new offer
// rather than a second key.
func ParseCrypto(v string) (Key, error) {
	f := strings.Fields(v)
	if len(f) < 3 {
		return Key{}, ErrCryptoSyntax
	}
	tag, err := strconv.Atoi(f[0])
	if err != nil || tag < 0 || tag > 999999999 {
		return Key{}, fmt.Errorf("%w: tag is not a number of up to 9 digits", ErrCryptoSyntax)
	}
	k := Key{Tag: tag, Suite: Suite(f[1])}
	switch k.Suite {
	case AESCM128SHA1_80, AESCM128SHA1_32:
	default:
		return Key{}, &UnsupportedError{What: "suite " + strconv.Quote(clip(f[1]))}
	}
	for _, p := range f[3:] {
		name, val, _ := strings.Cut(p, "=")
		switch {
		case name == "KDR" && val == "0":
		case name == "KDR", name == "UNENCRYPTED_SRTP", name == "UNAUTHENTICATED_SRTP", name == "FEC_KEY":
			return Key{}, &UnsupportedError{What: "session parameter " + name}
		}
	}
	first, _, _ := strings.Cut(f[2], ";")
	method, info, ok := strings.Cut(first, ":")
	if !ok || !strings.EqualFold(method, "inline") {
		return Key{}, ErrKeyMethod
	}
	parts := strings.Split(info, "|")
	if len(parts) > 3 {
		return Key{}, fmt.Errorf("%w: more than key, lifetime and MKI", ErrCryptoSyntax)
	}
	// 30 bytes are 40 base64 characters without padding.
	if len(parts[0]) != base64.StdEncoding.EncodedLen(len(k.material)) {
		return Key{}, ErrKeyLength
	}
	if n, err := base64.StdEncoding.Decode(k.material[:], []byte(parts[0])); err != nil || n != len(k.material) {
		return Key{}, ErrKeyLength
	}
	for _, p := range parts[1:] {
		if _, l, isMKI := strings.Cut(p, ":"); isMKI {
			ml, err := strconv.Atoi(l)
			if err != nil || ml < 1 || ml > maxMKILen {
				return Key{}, fmt.Errorf("%w: MKI length is not 1 to %d", ErrCryptoSyntax, maxMKILen)
			}
			k.MKILen = ml
		}
	}
	return k, nil
}

// clip bounds sender text put in an error.
func clip(s string) string {
	const maxErrText = 40
	if len(s) > maxErrText {
		return s[:maxErrText]
	}
	return s
}

// redacted replaces inline key material in text shown to a client.
const redacted = "REDACTED"

// Redact masks the key and salt of every "inline:" key parameter in b
// (RFC 4568 §6.1), keeping lifetime and MKI, and reports how many it
// masked; b is returned unchanged (not copied) when it holds none.
func Redact(b []byte) ([]byte, int) {
	const marker = "inline:"
	var out []byte
	n, rest := 0, b
	for {
		i := indexFold(rest, marker)
		if i < 0 {
			break
		}
		end := i + len(marker)
		j := end
		for j < len(rest) && !bytes.ContainsRune([]byte("|; \t\r\n"), rune(rest[j])) {
			j++
		}
		if out == nil {
			out = make([]byte, 0, len(b))
		}
		out = append(out, rest[:end]...)
		if j > end {
			out = append(out, redacted...)
			n++
		}
		rest = rest[j:]
	}
	if n == 0 {
		return b, 0
	}
	return append(out, rest...), n
}

// indexFold is bytes.Index ignoring ASCII case of an ASCII lower-case
// sep; its first byte is compared first, as the search runs over every
// line a message search scans.
func indexFold(b []byte, sep string) int {
	for i := 0; i+len(sep) <= len(b); i++ {
		if b[i]|0x20 == sep[0] && bytes.EqualFold(b[i:i+len(sep)], []byte(sep)) {
			return i
		}
	}
	return -1
}
