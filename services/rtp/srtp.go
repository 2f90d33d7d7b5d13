package rtp

import (
	"errors"

	"fieldtap/services/sdp"
	"fieldtap/services/srtp"
)

// SRTP payload states, as SRTPView.Payload names them.
const (
	// PayloadDecrypted: an SDES key from the call's SDP authenticated the
	// stream's packets; their payloads were read.
	PayloadDecrypted = "decrypted"
	// PayloadNeedsKeys: no key the box can use (DTLS-SRTP, no a=crypto,
	// or a suite it does not read): headers only.
	PayloadNeedsKeys = "needs_keys"
	// PayloadKeysFailed: SDES keys were offered but none authenticated
	// the stream's packets.
	PayloadKeysFailed = "keys_failed"
)

const (
	// maxKeyTrials bounds the a=crypto keys tried on one packet: a
	// dialog's offer and answer carry one to three each.
	maxKeyTrials = 8
	// maxTrialPackets is how many packets are tried against a dialog's
	// keys before the stream waits for new SDP: one packet damaged on the
	// way must not decide, and the keys cannot change without a new body.
	maxTrialPackets = 4
	// maxEventPacket bounds the SRTP packets decrypted for events (and so
	// the stream's buffer): an RFC 4733 event is 4 bytes after a header of
	// 12 to 72 bytes and an extension; a larger packet is not read.
	maxEventPacket = 256
)

// errEventSize refuses an event packet past maxEventPacket.
var errEventSize = errors.New("rtp: SRTP telephone-event packet past maxEventPacket")

// srtpState is a stream's SRTP reading, allocated for streams whose SDP
// said SRTP.
type srtpState struct {
	sess *srtp.Session // the key that authenticated; nil until one did
	// triedSDP is the dialog's SDP count at the last trial, trials the
	// packets tried since.
	triedSDP int
	trials   int
	keyedSDP int    // the dialog's SDP count when the key was found
	offered  bool   // an a=crypto line was parsed for this stream
	reason   string // why no offered key could be used
	buf      []byte // decrypted packet, reused
	hdr      Header

	authenticated uint64
	authFailures  uint64
	unread        uint64 // packets whose payload was not read
	eventsUnread  uint64 // of them, telephone-event packets
}

// SRTPView is what the box knows of a stream's SRTP.
type SRTPView struct {
	Keying  string // sdp.KeyingSDES, KeyingDTLS or KeyingUnknown
	Payload string // PayloadDecrypted, PayloadNeedsKeys or PayloadKeysFailed
	Reason  string // why the payload was not read, in words
	// Authenticated packets matched the stream's key (their payload is
	// readable; telephone-events were decrypted and read); AuthFailures
	// those whose tag did not match it once the key was known; Unread
	// those whose payload could not be read, EventsUnread the
	// telephone-event packets among them (digits dtmf_events cannot list).
	Authenticated uint64
	AuthFailures  uint64
	Unread        uint64
	EventsUnread  uint64
}

// keying is the stream's SRTP keying from its signalled media, "" for
// RTP or a stream no SDP announced.
func (s *stream) keying() string {
	if s.ep == nil {
		return ""
	}
	return s.ep.media.SRTP()
}

// unprotect reads an SRTP packet: it authenticates every packet (so the
// rollover counter follows the stream and failures are counted) and
// decrypts telephone-event packets into h, the only payload the analyser
// reads; any other packet, or one it cannot read, leaves h without a
// payload, so nothing reads noise as events.
func (s *stream) unprotect(dialogs *dialogTable, h *Header, pkt []byte, event bool) {
	st := s.srtp
	if st == nil {
		st = &srtpState{triedSDP: -1}
		s.srtp = st
	}
	h.Payload = nil
	var err error
	switch {
	case st.sess == nil:
		// A trial authenticates the packet; an event's is decrypted after
		// (Unprotect keeps no replay list, so it may see it again).
		if st.trial(dialogs.of(s.ep), s, pkt) && event {
			err = st.decrypt(h, pkt)
		}
	case event:
		err = st.decrypt(h, pkt)
	default:
		err = st.sess.Check(pkt)
	}
	if errors.Is(err, srtp.ErrAuth) {
		// A body since the key was found may rekey the stream (RFC 4568
		// §7.1.4: a re-INVITE with a new key): try the call's keys again.
		// Once the dialog is evicted no body can come: the key stays.
		if d := dialogs.of(s.ep); d != nil && sdpCount(d) != st.keyedSDP {
			st.sess, err = nil, nil
			if st.trial(d, s, pkt) && event {
				err = st.decrypt(h, pkt)
			}
		}
	}
	switch {
	case st.sess != nil && err == nil:
		st.authenticated++
		return
	case errors.Is(err, srtp.ErrAuth):
		st.authFailures++
	}
	st.unread++
	if event {
		st.eventsUnread++
	}
	h.Payload = nil
}

// decrypt reads an event packet's payload into h. The buffer stays an
// event's size, since no other packet is decrypted.
func (st *srtpState) decrypt(h *Header, pkt []byte) error {
	if len(pkt) > maxEventPacket {
		return errEventSize
	}
	var err error
	if st.buf, err = st.sess.Unprotect(st.buf, pkt); err != nil {
		return err
	}
	if st.hdr.Decode(st.buf) != nil || st.hdr.Truncated {
		return srtp.ErrShort
	}
	h.Payload = st.hdr.Payload
	return nil
}

// trial tries the dialog's SDES keys on pkt, the sender's own first:
// the one that authenticates is the stream's (RFC 4568: each side
// declares the key it sends with). It is bounded by maxKeyTrials keys and
// maxTrialPackets packets per SDP state of the dialog.
func (st *srtpState) trial(d *dialogMedia, s *stream, pkt []byte) bool {
	if d == nil {
		// Keys are read from the dialog's SDP, which went with it.
		st.reason = "the call's SDP, and its a=crypto keys, were evicted at the analyser's dialog bound before a key was found"
		return false
	}
	n := sdpCount(d)
	if n != st.triedSDP {
		st.triedSDP, st.trials = n, 0
	}
	if st.trials >= maxTrialPackets {
		return false
	}
	st.trials++
	tried := 0
	for _, own := range []bool{true, false} {
		for i := len(d.sdp) - 1; i >= 0; i-- {
			for _, m := range d.sdp[i].Session.Media {
				addr, _ := m.Addr()
				if (addr == s.key.Src) != own || m.Type != s.ep.media.Type {
					continue
				}
				for _, c := range m.Crypto {
					if tried >= maxKeyTrials {
						return false
					}
					tried++
					if st.try(c, pkt) {
						st.keyedSDP = n
						return true
					}
				}
			}
		}
	}
	return false
}

// try is one key on one packet: whether it authenticates it.
func (st *srtpState) try(c sdp.Secret, pkt []byte) bool {
	k, err := srtp.ParseCrypto(string(c))
	if err != nil {
		st.reason = err.Error() // never holds key material
		return false
	}
	st.offered = true
	sess, err := srtp.NewSession(k)
	if err != nil {
		st.reason = err.Error()
		return false
	}
	if sess.Check(pkt) != nil {
		return false
	}
	st.sess, st.reason = sess, ""
	return true
}

// sdpCount is how many SDP bodies d has carried: it changes with every
// new one, kept or dropped at the bound.
func sdpCount(d *dialogMedia) int { return len(d.sdp) + d.sdpDropped }

// srtpView reports the stream's SRTP, nil for RTP.
func (s *stream) srtpView() *SRTPView {
	kind := s.keying()
	if kind == "" && (s.srtp == nil || s.srtp.sess == nil) {
		return nil
	}
	v := &SRTPView{Keying: kind, Payload: PayloadNeedsKeys}
	if st := s.srtp; st != nil {
		v.Authenticated, v.AuthFailures, v.Unread, v.EventsUnread = st.authenticated, st.authFailures, st.unread, st.eventsUnread
		switch {
		case st.sess != nil:
			v.Keying, v.Payload = sdp.KeyingSDES, PayloadDecrypted
		case st.offered:
			v.Payload, v.Reason = PayloadKeysFailed, "no a=crypto key of the call authenticated the stream's packets (a key from SDP the capture did not hold, or a sender that began before the capture with its rollover counter past 0)"
		case st.reason != "":
			v.Reason = st.reason
		}
	}
	if v.Reason == "" && v.Payload == PayloadNeedsKeys {
		switch kind {
		case sdp.KeyingDTLS:
			v.Reason = "DTLS-SRTP: the keys are agreed inside the DTLS handshake and never cross the wire"
		case sdp.KeyingSDES:
			v.Reason = "no packet has been tried against the a=crypto keys yet"
		default:
			v.Reason = "RTP/SAVP without a=crypto or a=fingerprint: the SDP names no key"
		}
	}
	return v
}
