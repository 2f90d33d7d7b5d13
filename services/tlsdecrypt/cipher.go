package tlsdecrypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"hash"

	"golang.org/x/crypto/chacha20poly1305"
)

// suite is what a cipher suite needs of us: its AEAD, key and IV sizes
// and the hash of its key schedule.
type suite struct {
	keyLen int
	// fixedIV is TLS 1.2's implicit IV length: 4 for AES-GCM, whose
	// records carry the other 8 nonce bytes, 12 for ChaCha20-Poly1305.
	fixedIV int
	chacha  bool
	hash    func() hash.Hash
}

func (s suite) aead(key []byte) (cipher.AEAD, error) {
	if s.chacha {
		return chacha20poly1305.New(key)
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

var (
	aes128GCM = suite{keyLen: 16, fixedIV: 4, hash: sha256.New}
	aes256GCM = suite{keyLen: 32, fixedIV: 4, hash: sha512.New384}
	chacha    = suite{keyLen: 32, fixedIV: 12, chacha: true, hash: sha256.New}
)

// tls13Suites are the TLS 1.3 suites (RFC 8446 §B.4) we read.
var tls13Suites = map[uint16]suite{
	0x1301: aes128GCM,
	0x1302: aes256GCM,
	0x1303: chacha,
}

// tls12Suites are the TLS 1.2 AEAD suites (RFC 5288, 5289, 7905) we read.
var tls12Suites = map[uint16]suite{
	0x009C: aes128GCM, // RSA_WITH_AES_128_GCM_SHA256
	0x009D: aes256GCM, // RSA_WITH_AES_256_GCM_SHA384
	0x009E: aes128GCM, // DHE_RSA_WITH_AES_128_GCM_SHA256
	0x009F: aes256GCM, // DHE_RSA_WITH_AES_256_GCM_SHA384
	0xC02B: aes128GCM, // ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
	0xC02C: aes256GCM, // ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
	0xC02F: aes128GCM, // ECDHE_RSA_WITH_AES_128_GCM_SHA256
	0xC030: aes256GCM, // ECDHE_RSA_WITH_AES_256_GCM_SHA384
	0xCCA8: chacha,    // ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256
	0xCCA9: chacha,    // ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
	0xCCAA: chacha,    // DHE_RSA_WITH_CHACHA20_POLY1305_SHA256
}

// expandLabel is TLS 1.3's HKDF-Expand-Label (RFC 8446 §7.1) with an
// empty context, the only one traffic keys use.
func expandLabel(h func() hash.Hash, secret []byte, label string, n int) ([]byte, error) {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, 0)
	return hkdf.Expand(h, secret, string(info), n)
}

// prf is TLS 1.2's PRF (RFC 5246 §5), P_hash with the suite's hash.
func prf(h func() hash.Hash, secret []byte, label string, seed []byte, n int) []byte {
	ls := append([]byte(label), seed...)
	mac := hmac.New(h, secret)
	out := make([]byte, 0, n+mac.Size())
	mac.Write(ls)
	a := mac.Sum(nil) // A(1)
	for len(out) < n {
		mac.Reset()
		mac.Write(a)
		mac.Write(ls)
		out = mac.Sum(out)
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(a[:0])
	}
	return out[:n]
}

// keys is one direction's record protection in one epoch.
type keys struct {
	aead cipher.AEAD
	iv   []byte // TLS 1.3 and ChaCha20: 12 bytes; TLS 1.2 GCM: the 4-byte salt
	seq  uint64
	// secret is the TLS 1.3 traffic secret, kept for a key update.
	secret []byte
}

// tls13Keys derives a direction's key and IV from a traffic secret.
func tls13Keys(s suite, secret []byte) (*keys, error) {
	key, err := expandLabel(s.hash, secret, "key", s.keyLen)
	if err != nil {
		return nil, err
	}
	iv, err := expandLabel(s.hash, secret, "iv", 12)
	if err != nil {
		return nil, err
	}
	a, err := s.aead(key)
	if err != nil {
		return nil, err
	}
	return &keys{aead: a, iv: iv, secret: secret}, nil
}

// tls12Keys expands a master secret into the client's and the server's
// write keys (RFC 5246 §6.3; AEAD suites have no MAC keys).
func tls12Keys(s suite, master []byte, clientRandom, serverRandom [32]byte) (client, server *keys, err error) {
	seed := append(serverRandom[:], clientRandom[:]...)
	kb := prf(s.hash, master, "key expansion", seed, 2*s.keyLen+2*s.fixedIV)
	ck, sk := kb[:s.keyLen], kb[s.keyLen:2*s.keyLen]
	civ, siv := kb[2*s.keyLen:2*s.keyLen+s.fixedIV], kb[2*s.keyLen+s.fixedIV:]
	ca, err := s.aead(ck)
	if err != nil {
		return nil, nil, err
	}
	sa, err := s.aead(sk)
	if err != nil {
		return nil, nil, err
	}
	return &keys{aead: ca, iv: civ}, &keys{aead: sa, iv: siv}, nil
}

// seqNonce is iv XOR the sequence number, left-padded (RFC 8446 §5.3,
// RFC 7905 §2).
func seqNonce(dst, iv []byte, seq uint64) []byte {
	dst = append(dst[:0], iv...)
	for i := range 8 {
		dst[len(dst)-1-i] ^= byte(seq >> (8 * i))
	}
	return dst
}
