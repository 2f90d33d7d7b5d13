// Package sdp parses Session Description Protocol bodies (RFC 8866) as SIP
// offers and answers carry them (RFC 3264): the connection address (c=),
// each media line (m=) with its payload types, a=rtpmap, a=fmtp, a=ptime,
// the direction attributes (sendrecv, sendonly, recvonly, inactive) and
// rtcp-mux / a=rtcp, and SRTP keying: a=crypto values (SDES, RFC 4568),
// kept as Secrets, and whether a=fingerprint (DTLS-SRTP) was given.
//
// Parse is pure: bytes in, a Session out, never a panic. Every list the
// sender controls is bounded by a named constant; what does not fit is
// counted in Session.Dropped rather than kept.
package sdp
