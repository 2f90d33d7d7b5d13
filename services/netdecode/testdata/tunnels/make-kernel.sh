#!/bin/sh
# Makes the kernel-encapsulated captures in this directory: two network
# namespaces joined by a veth pair (the underlay), a tunnel device on each
# end, a SIP capture replayed into the tunnel with tcpreplay, and the
# underlay captured with dumpcap on the far end. Needs root, iproute2,
# tcpreplay, dumpcap. Usage: make-kernel.sh <sip capture dir> <kind>...
# where kind is vxlan, vxlan8472 or vxlan6 (the kernel this was run on,
# 6.18, had no gre/gretap/ip6gretap/erspan module: see PROVENANCE.md).
set -eu
src=$1
shift
out=$(cd "$(dirname "$0")" && pwd)
a=ftdecap-a b=ftdecap-b
cleanup() { ip netns del $a 2>/dev/null || true; ip netns del $b 2>/dev/null || true; }
trap cleanup EXIT
for kind in "$@"; do
	cleanup
	ip netns add $a
	ip netns add $b
	ip link add ul0 netns $a type veth peer name ul0 netns $b
	ip -n $a link set ul0 up
	ip -n $b link set ul0 up
	ip -n $a addr add 192.0.2.1/24 dev ul0
	ip -n $b addr add 192.0.2.2/24 dev ul0
	ip -n $a addr add 2001:db8::1/64 dev ul0 nodad
	ip -n $b addr add 2001:db8::2/64 dev ul0 nodad
	case $kind in
	vxlan) args="id 42 local 192.0.2.1 remote 192.0.2.2 dstport 4789" peer="id 42 local 192.0.2.2 remote 192.0.2.1 dstport 4789" ;;
	vxlan8472) args="id 43 local 192.0.2.1 remote 192.0.2.2 dstport 8472" peer="id 43 local 192.0.2.2 remote 192.0.2.1 dstport 8472" ;;
	vxlan6) args="id 44 local 2001:db8::1 remote 2001:db8::2 dstport 4789" peer="id 44 local 2001:db8::2 remote 2001:db8::1 dstport 4789" ;;
	*) echo "unknown kind $kind" >&2; exit 1 ;;
	esac
	ip -n $a link add tun0 type vxlan $args
	ip -n $b link add tun0 type vxlan $peer
	ip -n $a link set tun0 up
	ip -n $b link set tun0 up
	pcap=$out/kernel-$kind.pcap
	ip netns exec $b dumpcap -q -P -i ul0 -w "$pcap" -f "not arp and not icmp6" &
	cap=$!
	# dumpcap says nothing when it is ready: wait for its file to appear.
	while [ ! -s "$pcap" ]; do sleep 0.1; done
	for f in gen-sipp-hold-resume-rfc2833-udp.pcapng SIP-Call-Flow-Over-TCP.pcap; do
		ip netns exec $a tcpreplay -q -t -i tun0 "$src/$f" >/dev/null
	done
	sleep 1
	kill -INT $cap
	wait $cap || true
done
