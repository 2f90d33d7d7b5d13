package board

// PrepareSpan readies a mirror-port interface for capture: link up,
// promiscuous, every address removed and IPv6 disabled, so the box never
// answers or originates a frame on the mirrored network.
func PrepareSpan(ifname string) Outcome {
	const part = "span"
	if ifname == "" {
		return skipped(part, "the board has no SPAN interface")
	}
	if err := prepareSpan(ifname); err != nil {
		return failed(part+" "+ifname, err)
	}
	return up(part+" "+ifname, "link up, promiscuous, no addresses, IPv6 disabled")
}
