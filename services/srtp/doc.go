// Package srtp reads SRTP (RFC 3711) as a passive observer with keys an
// SDP body gave by SDES (RFC 4568 a=crypto): it parses the crypto
// attribute's key parameters, derives the session keys, authenticates
// each packet's tag and decrypts its payload, so what needs the payload
// (RFC 4733 events) can be read.
//
// Suites: AES_CM_128_HMAC_SHA1_80 and AES_CM_128_HMAC_SHA1_32 with the
// default key derivation rate (0). SRTCP, AEAD suites, non-zero key
// derivation rates and DTLS-SRTP keys (which never cross the wire) are not
// read; ParseCrypto refuses them by name.
//
// Master keys are secrets: Key never prints them (String, GoString and
// MarshalText redact), and Redact masks inline key material in text shown
// to a client.
package srtp
