package coverage

import (
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
)

// spanSkips are the decoder's skip reasons that may hide SIP or RTP, in
// words. A frame that is not IP (ARP, LLDP) or an IP protocol that
// carries neither (ICMP, OSPF) is skipped too, and is not listed.
var spanSkips = []struct{ reason, what string }{
	{netdecode.SkipTunnel, "frames in a tunnel the box does not decode (EtherIP, L2TPv3, PPTP's GRE, GRE or MPLS carrying neither IP nor Ethernet, an unknown ERSPAN version)"},
	{netdecode.SkipEncrypted, "IPsec ESP packets, encrypted"},
	{netdecode.SkipLinkType, "frames of a link type the box does not decode"},
	{netdecode.SkipTruncated, "frames cut short (snap length or a broken header)"},
	{netdecode.SkipBadIP, "packets with a broken IP header"},
	{netdecode.SkipTooDeep, "frames nested deeper than the decoder follows"},
	{netdecode.SkipBadUDP, "datagrams with a broken UDP header"},
	{netdecode.SkipBadTCP, "segments with a broken TCP header"},
}

// SPAN lists what an Ethernet port's decoders saw and did not analyse,
// from the decoder's and the SIP analyser's counters (kept for every
// Ethernet port together).
func SPAN(ds netdecode.Stats, ss sip.StreamStats) []Cause {
	var out []Cause
	both := SIP | Media
	for _, s := range spanSkips {
		out = append(out, Cause{Family: both, Name: s.reason, Count: ds.Skipped[s.reason], What: s.what})
	}
	out = append(out,
		Cause{Family: both, Name: "fragments_incomplete", Count: ds.Frag.TimedOut + ds.Frag.TableFull + ds.Frag.Oversize + ds.Frag.Overlapping,
			What: "IP datagrams whose fragments could not be put together"},
		Cause{Family: SIP, Name: "tcp_bytes_lost", Count: ds.TCP.Gaps + ds.TCP.BufferFull + ds.TCP.Evicted,
			What: "TCP streams that lost bytes to a gap, a full buffer or the stream limit"},
		Cause{Family: SIP, Name: "tls_on_sips_port", Count: ss.TLSOnSIPS,
			What: "TLS streams on the SIPS port 5061 not read: no logged keys, a cipher suite not read, or bytes lost"},
		Cause{Family: SIP, Name: "sip_undecodable", Count: ss.Undecodable + ss.DecodePanics,
			What: "SIP-looking messages the parser refused"},
	)
	return out
}
