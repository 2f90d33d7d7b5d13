// Package hwtest is the emulated board: it assembles an initramfs from
// Debian's arm64 kernel, busybox-static and an arm64 fieldtapd, boots it
// under qemu-system-aarch64 -M virt with real SocketCAN (kvaser_pci,
// sja1000), 16550 serial ports, a SPAN virtio-net fed from the host, a
// PL061 GPIO chip and dummy_hcd, and checks the box from the host over
// MCP. The test runs only with FIELDTAP_HWTEST=1 (hwtest/run, make
// hwtest); the image helpers are unit-tested everywhere.
// See docs/hardware-test.md.
package hwtest
