package sip

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// ErrFilterControl is WiresharkFilter's refusal of a Call-ID with a
// control character: a display filter could spell it only as an escape
// no one reading the filter would recognise, and no sane peer sends one.
var ErrFilterControl = errors.New("the Call-ID holds a control character")

// maxFilterFlows bounds the media terms of one filter: a call's RTP
// streams and RTCP pairs, with room for re-INVITEs moving them.
const maxFilterFlows = 16

// WSFilter is a Wireshark display filter for one call.
type WSFilter struct {
	SIP   string // the call's SIP messages: sip.Call-ID == "…"
	Media string // its RTP/RTCP flows, "" without any
	All   string // SIP or media
	// FlowsLeftOut counts media flows past maxFilterFlows.
	FlowsLeftOut int
}

// WiresharkFilter builds the display filter of one call: its Call-ID as a
// display-filter string literal (Wireshark's grammar: `"` and `\`
// escaped with a backslash; bytes that are not UTF-8 as \xhh), and each
// media flow as an exact address and port pair in its direction.
func WiresharkFilter(callID string, flows []MediaFlow) (WSFilter, error) {
	lit, err := displayString(callID)
	if err != nil {
		return WSFilter{}, err
	}
	out := WSFilter{SIP: "sip.Call-ID == " + lit}
	var terms []string
	for _, f := range flows {
		if len(terms) == maxFilterFlows {
			out.FlowsLeftOut++
			continue
		}
		terms = append(terms, flowTerm(f.Src, f.Dst))
	}
	out.All = out.SIP
	if len(terms) > 0 {
		out.Media = strings.Join(terms, " || ")
		out.All = out.SIP + " || " + out.Media
	}
	return out, nil
}

// displayString quotes s as a display-filter string.
func displayString(s string) (string, error) {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return "", fmt.Errorf("%w (U+%04X at byte %d)", ErrFilterControl, r, i)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	b.WriteByte('"')
	return b.String(), nil
}

func flowTerm(src, dst netip.AddrPort) string {
	ip := "ip"
	if src.Addr().Is6() && !src.Addr().Is4In6() {
		ip = "ipv6"
	}
	return fmt.Sprintf("(%s.src == %s && udp.srcport == %d && %s.dst == %s && udp.dstport == %d)",
		ip, src.Addr().Unmap(), src.Port(), ip, dst.Addr().Unmap(), dst.Port())
}
