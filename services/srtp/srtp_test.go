package srtp

import (
	"bytes"
	"crypto/aes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pion/rtp"
	pion "github.com/pion/srtp/v3"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 3711 Appendix B.2: the AES-CM keystream of a 1,044,512-byte segment,
// its first and last three blocks.
func TestKeystreamRFC3711B2(t *testing.T) {
	b, err := aes.NewCipher(unhex(t, "2B7E151628AED2A6ABF7158809CF4F3C"))
	if err != nil {
		t.Fatal(err)
	}
	var iv [aes.BlockSize]byte
	copy(iv[:], unhex(t, "F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000"))
	seg := make([]byte, 1044512)
	keystream(b, &iv, seg)
	for _, c := range []struct {
		block int
		want  string
	}{
		{0x0000, "E03EAD0935C95E80E166B16DD92B4EB4"},
		{0x0001, "D23513162B02D0F72A43A2FE4A5F97AB"},
		{0x0002, "41E95B3BB0A2E8DD477901E4FCA894C0"},
		{0xFEFF, "EC8CDF7398607CB0F2D21675EA9EA1E4"},
		{0xFF00, "362B7C3C6773516318A077D7FC5073AE"},
		{0xFF01, "6A2CC3787889374FBEB4C81B17BA6C44"},
	} {
		if got := seg[c.block*16 : c.block*16+16]; !bytes.Equal(got, unhex(t, c.want)) {
			t.Errorf("block %04X = %X, RFC 3711 B.2 says %s", c.block, got, c.want)
		}
	}
}

// RFC 3711 Appendix B.3: the session keys derived from a master key.
func TestDeriveRFC3711B3(t *testing.T) {
	master, err := aes.NewCipher(unhex(t, "E1F97A0D3E018BE0D64FA32C06DE4139"))
	if err != nil {
		t.Fatal(err)
	}
	salt := unhex(t, "0EC675AD498AFEEBB6960B3AABE6")
	for _, c := range []struct {
		label byte
		n     int
		want  string
	}{
		{labelEncryption, 16, "C61E7A93744F39EE10734AFE3FF7A087"},
		{labelSalt, 14, "30CBBC08863D8C85D49DB34A9AE1"},
		{labelAuth, 94, "CEBE321F6FF7716B6FD4AB49AF256A15 6D38BAA48F0A0ACF3C34E2359E6CDBCE E049646C43D9327AD175578EF7227098" +
			"6371C10C9A369AC2F94A8C5FBCDDDC25 6D6E919A48B610EF17C2041E47403576 6B68642C59BBFC2F34DB60DBDFB2"},
	} {
		out := make([]byte, c.n)
		derive(master, salt, c.label, out)
		if !bytes.Equal(out, unhex(t, c.want)) {
			t.Errorf("label %d: %X, RFC 3711 B.3 says %s", c.label, out, c.want)
		}
	}
}

// testMaster is RFC 3711 B.3's master key and salt as an a=crypto line
// carries them.
var testMaster = base64.StdEncoding.EncodeToString(append(
	[]byte{0xE1, 0xF9, 0x7A, 0x0D, 0x3E, 0x01, 0x8B, 0xE0, 0xD6, 0x4F, 0xA3, 0x2C, 0x06, 0xDE, 0x41, 0x39},
	0x0E, 0xC6, 0x75, 0xAD, 0x49, 0x8A, 0xFE, 0xEB, 0xB6, 0x96, 0x0B, 0x3A, 0xAB, 0xE6))

func testKey(t testing.TB, line string) Key {
	t.Helper()
	k, err := ParseCrypto(line)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// pionContext is the independent sender: pion/srtp with the same key.
func pionContext(t testing.TB, k Key, mki []byte) *pion.Context {
	t.Helper()
	profile := pion.ProtectionProfileAes128CmHmacSha1_80
	if k.Suite == AESCM128SHA1_32 {
		profile = pion.ProtectionProfileAes128CmHmacSha1_32
	}
	var opts []pion.ContextOption
	if mki != nil {
		opts = append(opts, pion.MasterKeyIndicator(mki))
	}
	c, err := pion.CreateContext(k.material[:16], k.material[16:], profile, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func plainPacket(seq uint16, ssrc uint32, csrcs int, payload []byte) []byte {
	h := rtp.Header{Version: 2, PayloadType: 0, SequenceNumber: seq, Timestamp: uint32(seq) * 160, SSRC: ssrc}
	for i := range csrcs {
		h.CSRC = append(h.CSRC, uint32(i+1))
	}
	b, _ := (&rtp.Packet{Header: h, Payload: payload}).Marshal()
	return b
}

// Packets pion encrypts decrypt to what it was given, across a sequence
// wrap (the ROC moving to 1 and a late packet from before it), for both
// suites, with CSRCs and with an MKI.
func TestUnprotectAgainstPion(t *testing.T) {
	for _, c := range []struct {
		name  string
		line  string
		mki   []byte
		csrcs int
	}{
		{"sha1_80", "1 AES_CM_128_HMAC_SHA1_80 inline:" + testMaster, nil, 0},
		{"sha1_32", "1 AES_CM_128_HMAC_SHA1_32 inline:" + testMaster + "|2^31", nil, 2},
		{"mki", "1 AES_CM_128_HMAC_SHA1_80 inline:" + testMaster + "|2^20|1:4", []byte{0, 0, 0, 1}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := testKey(t, c.line)
			enc := pionContext(t, k, c.mki)
			s, err := NewSession(k)
			if err != nil {
				t.Fatal(err)
			}
			seqs := []uint16{65530, 65531, 65533, 65532, 65534, 65535, 0, 1, 65535 /* late, ROC 0 */, 2, 3}
			var sent [][]byte
			for i := range seqs { // pion encrypts in sending order, with its own ROC
				sent = append(sent, nil)
				_ = i
			}
			order := []int{0, 1, 2, 3, 4, 5, 6, 7, 9, 10} // pion's send order (no duplicates)
			for _, i := range order {
				p := plainPacket(seqs[i], 0xCAFEF00D, c.csrcs, bytes.Repeat([]byte{byte(i)}, 160))
				e, err := enc.EncryptRTP(nil, p, nil)
				if err != nil {
					t.Fatal(err)
				}
				sent[i] = e
			}
			sent[8] = sent[5] // the packet of seq 65535 (ROC 0) arriving again after the wrap
			var buf []byte
			for i, e := range sent {
				buf, err = s.Unprotect(buf, e)
				if err != nil {
					t.Fatalf("packet %d (seq %d): %v", i, seqs[i], err)
				}
				want := plainPacket(seqs[i], 0xCAFEF00D, c.csrcs, bytes.Repeat([]byte{byte(i)}, 160))
				if i == 8 {
					want = plainPacket(seqs[5], 0xCAFEF00D, c.csrcs, bytes.Repeat([]byte{5}, 160))
				}
				if !bytes.Equal(buf, want) {
					t.Fatalf("packet %d (seq %d) decrypted to\n%X\nwant\n%X", i, seqs[i], buf, want)
				}
			}
			if s.roc != 1 {
				t.Errorf("ROC after the wrap = %d, want 1", s.roc)
			}
		})
	}
}

// A flipped bit, the wrong key or a cut packet fail, and do not move the
// ROC.
func TestUnprotectRefuses(t *testing.T) {
	k := testKey(t, "1 AES_CM_128_HMAC_SHA1_80 inline:"+testMaster)
	e, err := pionContext(t, k, nil).EncryptRTP(nil, plainPacket(7, 1, 0, make([]byte, 20)), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := NewSession(k)
	bad := bytes.Clone(e)
	bad[15] ^= 1
	if _, err := s.Unprotect(nil, bad); !errors.Is(err, ErrAuth) {
		t.Errorf("flipped payload bit: %v, want ErrAuth", err)
	}
	other := testKey(t, "1 AES_CM_128_HMAC_SHA1_80 inline:"+base64.StdEncoding.EncodeToString(make([]byte, 30)))
	so, _ := NewSession(other)
	if _, err := so.Unprotect(nil, e); !errors.Is(err, ErrAuth) {
		t.Errorf("wrong key: %v, want ErrAuth", err)
	}
	if _, err := s.Unprotect(nil, e[:21]); !errors.Is(err, ErrShort) {
		t.Errorf("cut packet: %v, want ErrShort", err)
	}
	if s.started {
		t.Error("a refused packet moved the receiver's state")
	}
	if _, err := s.Unprotect(nil, e); err != nil {
		t.Errorf("the good packet after refusals: %v", err)
	}
}

func TestParseCrypto(t *testing.T) {
	k := testKey(t, "  7 AES_CM_128_HMAC_SHA1_32 inline:"+testMaster+"|2^20|3:2;inline:"+base64.StdEncoding.EncodeToString(make([]byte, 30))+"|2^20|4:2 KDR=0")
	if k.Tag != 7 || k.Suite != AESCM128SHA1_32 || k.MKILen != 2 || k.Suite.TagLen() != 4 {
		t.Errorf("parsed %+v", k)
	}
	for _, c := range []struct {
		line string
		want error
	}{
		{"1 AES_CM_128_HMAC_SHA1_80", ErrCryptoSyntax},
		{"x AES_CM_128_HMAC_SHA1_80 inline:" + testMaster, ErrCryptoSyntax},
		{"1 AES_CM_128_HMAC_SHA1_80 uri:http://h/k", ErrKeyMethod},
		{"1 AES_CM_128_HMAC_SHA1_80 inline:QUJD", ErrKeyLength},
		{"1 AES_CM_128_HMAC_SHA1_80 inline:" + testMaster + "AAAA", ErrKeyLength},
		{"1 AES_CM_128_HMAC_SHA1_80 inline:" + testMaster + "|2^20|1:0", ErrCryptoSyntax},
		{"1 AES_CM_128_HMAC_SHA1_80 inline:" + testMaster + "|1|2|3", ErrCryptoSyntax},
	} {
		_, err := ParseCrypto(c.line)
		if !errors.Is(err, c.want) {
			t.Errorf("%q: %v, want %v", c.line, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), testMaster[:8]) {
			t.Errorf("%q: the error shows key material: %v", c.line, err)
		}
	}
	for _, line := range []string{
		"1 AEAD_AES_128_GCM inline:" + testMaster,
		"1 AES_CM_128_HMAC_SHA1_80 inline:" + testMaster + " KDR=20",
		"1 AES_CM_128_HMAC_SHA1_80 inline:" + testMaster + " UNENCRYPTED_SRTP",
	} {
		var ue *UnsupportedError
		if _, err := ParseCrypto(line); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want UnsupportedError", line, err)
		}
	}
	for _, s := range []string{k.String(), fmt.Sprintf("%v %+v %#v", k, k, k)} {
		if strings.Contains(s, "material:") || strings.Contains(s, "225") /* 0xE1 */ {
			t.Errorf("a key printed its material: %s", s)
		}
	}
}

func TestRedact(t *testing.T) {
	body := "v=0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" + testMaster + "|2^20|1:4;INLINE:" + testMaster + "\r\na=crypto:2 X inline:\r\n"
	got, n := Redact([]byte(body))
	want := "v=0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:REDACTED|2^20|1:4;INLINE:REDACTED\r\na=crypto:2 X inline:\r\n"
	if string(got) != want || n != 2 {
		t.Errorf("Redact = %q (%d), want %q (2)", got, n, want)
	}
	plain := []byte("v=0\r\nm=audio 1 RTP/AVP 0\r\n")
	if got, n := Redact(plain); n != 0 || &got[0] != &plain[0] {
		t.Error("a body without keys was copied or changed")
	}
}

func FuzzParseCrypto(f *testing.F) {
	f.Add("1 AES_CM_128_HMAC_SHA1_80 inline:" + testMaster + "|2^20|1:4")
	f.Add("2 AES_CM_128_HMAC_SHA1_32 inline:" + testMaster + ";inline:" + testMaster + " KDR=0 UNENCRYPTED_SRTCP")
	f.Add("1 AEAD_AES_128_GCM inline:AAAA")
	f.Fuzz(func(t *testing.T, line string) {
		k, err := ParseCrypto(line)
		if err != nil {
			return
		}
		if _, err := NewSession(k); err != nil {
			t.Fatalf("a parsed key makes no session: %v", err)
		}
		r, _ := Redact([]byte(line))
		if bytes.Contains(r, k.material[:]) {
			t.Fatal("Redact left key bytes")
		}
	})
}

func FuzzUnprotect(f *testing.F) {
	k := testKey(f, "1 AES_CM_128_HMAC_SHA1_80 inline:"+testMaster)
	enc := pionContext(f, k, nil)
	for i, p := range [][]byte{plainPacket(1, 2, 0, []byte("hello")), plainPacket(65535, 2, 3, nil)} {
		e, err := enc.EncryptRTP(nil, p, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(e, i == 1)
	}
	f.Add([]byte{0x90, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0xFF, 0xFF}, false)
	f.Fuzz(func(t *testing.T, pkt []byte, sha32 bool) {
		kk := k
		if sha32 {
			kk.Suite = AESCM128SHA1_32
		}
		s, err := NewSession(kk)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Unprotect(nil, pkt)
		if err == nil && len(out) != len(pkt)-kk.Suite.TagLen() {
			t.Fatalf("decrypted %d bytes of a %d-byte packet", len(out), len(pkt))
		}
	})
}

// FuzzUnprotectAgainstPion: any RTP packet pion encrypts decrypts here to
// what pion was given, for both suites.
func FuzzUnprotectAgainstPion(f *testing.F) {
	k := testKey(f, "1 AES_CM_128_HMAC_SHA1_80 inline:"+testMaster)
	f.Add(plainPacket(1, 2, 0, []byte("hello")), false)
	f.Add(plainPacket(65535, 2, 3, bytes.Repeat([]byte{0xFF}, 160)), true)
	f.Add([]byte{0x90, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xBE, 0xDE, 0, 1, 1, 2, 3, 4, 9}, false)
	f.Fuzz(func(t *testing.T, plain []byte, sha32 bool) {
		var h rtp.Header
		n, err := h.Unmarshal(plain)
		if err != nil || h.Padding || n > len(plain) {
			return // pion refuses it, or pads (its padding is its own choice)
		}
		kk := k
		if sha32 {
			kk.Suite = AESCM128SHA1_32
		}
		enc, err := pionContext(t, kk, nil).EncryptRTP(nil, plain, nil)
		if err != nil {
			return
		}
		s, err := NewSession(kk)
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Unprotect(nil, enc)
		if err != nil {
			t.Fatalf("a packet pion protected: %v", err)
		}
		if !bytes.Equal(out, plain[:len(out)]) || len(out) != len(plain) {
			t.Fatalf("decrypted\n%X\nwant\n%X", out, plain)
		}
	})
}
