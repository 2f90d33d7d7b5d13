// Package netdecode turns captured link-layer frames into transport
// payloads: UDP datagrams and in-order TCP byte streams.
//
// It decodes, without allocating on the common path:
//
//   - link layers: Ethernet II with any stack of 802.1Q/802.1ad (QinQ) tags,
//     PPPoE session frames, Linux cooked capture v1 (SLL) and v2 (SLL2),
//     raw IPv4/IPv6 (DLT_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6), BSD loopback
//     (DLT_NULL, host byte order; DLT_LOOP, network byte order) and PPP;
//   - tunnels (remote SPAN, tunnel.go): GRE with its optional fields
//     carrying Ethernet, IP or MPLS; ERSPAN types I, II and III; VXLAN on
//     Options.VXLANPorts; MPLS label stacks; IP in IP; nested up to
//     maxEncapsulation, each header opened counted by kind (Stats.Tunnels);
//   - IPv4 and IPv6 (extension headers skipped), with fragment reassembly
//     that is bounded in datagrams and bytes, timed out on capture time and
//     counted;
//   - UDP, handed to the handler as one datagram;
//   - TCP, reassembled per direction into an in-order byte stream the
//     handler consumes at its own framing boundaries.
//
// Every frame that yields nothing is counted under a reason in Stats; the
// decoder never panics on hostile input. A Decoder is used by one goroutine
// (a port's consumer); Stats may be read from any goroutine.
//
// services/ never imports drivers/ beyond its shared vocabulary: the caller
// passes plain values (capture time, a wire.LinkType, the frame bytes).
package netdecode
