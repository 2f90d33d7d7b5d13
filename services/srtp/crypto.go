package srtp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"hash"
)

// RFC 3711 §4.3 sizes for the AES_CM_128 suites (RFC 4568 §6.2).
const (
	masterKeyLen  = 16
	masterSaltLen = 14
	authKeyLen    = 20 // HMAC-SHA1 key, n_a = 160
	rtpHeaderLen  = 12
)

// Key derivation labels (RFC 3711 §4.3.1); the SRTCP ones are not used.
const (
	labelEncryption = 0x00
	labelAuth       = 0x01
	labelSalt       = 0x02
)

// Errors from Unprotect.
var (
	ErrShort = errors.New("srtp: packet shorter than its header and authentication tag")
	ErrAuth  = errors.New("srtp: authentication tag does not match")
)

// Session is one sender's SRTP state under one master key: its session
// keys and, since one key protects one SSRC's packets, that stream's
// rollover counter. A Session is not safe for concurrent use.
type Session struct {
	suite  Suite
	mkiLen int
	block  cipher.Block
	salt   [masterSaltLen]byte
	mac    hash.Hash
	sum    []byte // HMAC output scratch

	// RFC 3711 §3.3.1: the rollover counter and highest sequence seen.
	roc     uint32
	sl      uint16
	started bool
}

// NewSession derives k's session keys (RFC 3711 §4.3, key derivation
// rate 0).
func NewSession(k Key) (*Session, error) {
	master, err := aes.NewCipher(k.material[:masterKeyLen])
	if err != nil {
		return nil, err
	}
	salt := k.material[masterKeyLen:]
	var encKey [masterKeyLen]byte
	var authKey [authKeyLen]byte
	s := &Session{suite: k.Suite, mkiLen: k.MKILen}
	derive(master, salt, labelEncryption, encKey[:])
	derive(master, salt, labelAuth, authKey[:])
	derive(master, salt, labelSalt, s.salt[:])
	if s.block, err = aes.NewCipher(encKey[:]); err != nil {
		return nil, err
	}
	s.mac = hmac.New(sha1.New, authKey[:])
	s.sum = make([]byte, 0, sha1.Size)
	return s, nil
}

// derive is the AES-CM PRF of RFC 3711 §4.3.1/§4.3.3 with r = 0: x is
// the label at key_id's top byte XOR the master salt, the keystream
// starts at x·2^16.
func derive(master cipher.Block, salt []byte, label byte, out []byte) {
	var iv [aes.BlockSize]byte
	copy(iv[:], salt)
	iv[7] ^= label // key_id = label || r (48 bits) aligned to the salt's end
	keystream(master, &iv, out)
}

// keystream XORs out with AES-CM's keystream from iv (RFC 3711 §4.1.1),
// the counter in iv's last 16 bits, as the RFC's 2^16 blocks per packet.
func keystream(b cipher.Block, iv *[aes.BlockSize]byte, out []byte) {
	var ctr, ks [aes.BlockSize]byte
	ctr = *iv
	for i := 0; i < len(out); i += aes.BlockSize {
		b.Encrypt(ks[:], ctr[:])
		subtle.XORBytes(out[i:], out[i:], ks[:min(aes.BlockSize, len(out)-i)])
		c := binary.BigEndian.Uint16(ctr[14:]) + 1
		binary.BigEndian.PutUint16(ctr[14:], c)
	}
}

// Unprotect authenticates one SRTP packet and decrypts its payload into
// dst (grown as needed, returned): the RTP packet as the sender built it,
// without MKI and tag. The caller has checked the packet is RTP. The
// rollover counter moves only on packets that authenticate (RFC 3711
// §3.3.1).
func (s *Session) Unprotect(dst, pkt []byte) ([]byte, error) {
	hdr, authed, roc, err := s.authenticate(pkt)
	if err != nil {
		return dst, err
	}
	dst = append(dst[:0], authed...)
	var iv [aes.BlockSize]byte
	copy(iv[:], s.salt[:])
	ssrc := binary.BigEndian.Uint32(pkt[8:])
	index := uint64(roc)<<16 | uint64(binary.BigEndian.Uint16(pkt[2:]))
	var x [12]byte // SSRC·2^64 XOR index·2^16 in the IV's bytes 4..15
	binary.BigEndian.PutUint32(x[0:], ssrc)
	binary.BigEndian.PutUint64(x[4:], index<<16)
	subtle.XORBytes(iv[4:], iv[4:], x[:])
	keystream(s.block, &iv, dst[hdr:])
	return dst, nil
}

// Check authenticates one SRTP packet without decrypting it, moving the
// rollover counter as Unprotect does: for packets whose payload nobody
// reads, at no copy.
func (s *Session) Check(pkt []byte) error {
	_, _, _, err := s.authenticate(pkt)
	return err
}

// authenticate checks pkt's tag (RFC 3711 §4.2: HMAC-SHA1 over header,
// encrypted payload and ROC) and returns the header's length, the
// authenticated portion and the packet's ROC.
func (s *Session) authenticate(pkt []byte) (int, []byte, uint32, error) {
	tagLen := s.suite.TagLen()
	hdr, ok := headerLen(pkt)
	if !ok || len(pkt) < hdr+s.mkiLen+tagLen {
		return 0, nil, 0, ErrShort
	}
	authed := pkt[:len(pkt)-s.mkiLen-tagLen]
	tag := pkt[len(pkt)-tagLen:]
	seq := binary.BigEndian.Uint16(pkt[2:])
	roc := s.estimate(seq)
	var rocb [4]byte
	binary.BigEndian.PutUint32(rocb[:], roc)
	s.mac.Reset()
	s.mac.Write(authed)
	s.mac.Write(rocb[:])
	s.sum = s.mac.Sum(s.sum[:0])
	if !hmac.Equal(s.sum[:tagLen], tag) {
		return 0, nil, 0, ErrAuth
	}
	s.update(seq, roc)
	return hdr, authed, roc, nil
}

// estimate is RFC 3711 Appendix A's guess of the packet's ROC from its
// sequence number and the highest one seen (s_l). A passive receiver
// starts at ROC 0 with the first packet it sees.
func (s *Session) estimate(seq uint16) uint32 {
	if !s.started {
		return s.roc
	}
	const half = 1 << 15
	switch {
	case s.sl < half && int(seq)-int(s.sl) > half && s.roc > 0:
		return s.roc - 1
	case s.sl >= half && int(s.sl)-half > int(seq):
		return s.roc + 1
	}
	return s.roc
}

// update moves s_l and the ROC after a packet authenticated.
func (s *Session) update(seq uint16, roc uint32) {
	switch {
	case !s.started:
		s.started, s.sl, s.roc = true, seq, roc
	case roc == s.roc+1:
		s.roc, s.sl = roc, seq
	case roc == s.roc && seq > s.sl:
		s.sl = seq
	}
}

// headerLen is the RTP header's length with CSRCs and extension, false
// when the packet is shorter than it says.
func headerLen(p []byte) (int, bool) {
	if len(p) < rtpHeaderLen {
		return 0, false
	}
	n := rtpHeaderLen + 4*int(p[0]&0x0F)
	if p[0]&0x10 != 0 {
		if len(p) < n+4 {
			return 0, false
		}
		n += 4 + 4*int(binary.BigEndian.Uint16(p[n+2:]))
	}
	return n, len(p) >= n
}
