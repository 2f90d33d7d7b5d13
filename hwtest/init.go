package hwtest

import (
	"net/netip"
	"strconv"
)

// Marker lines the guest prints on its console. The host test waits for
// Ready before it talks MCP.
const (
	Ready    = "FIELDTAP-HWTEST READY"
	StatLine = "FIELDTAP-HWTEST STAT"
	// RxLine starts each frame `guest candump` saw on can1 that can1
	// did not send itself.
	RxLine = "FIELDTAP-HWTEST RX"
	// KilledLine is `guest killon` killing every fieldtapd mid-plan, with
	// the controller's mode at that moment; ListenOnlyLine is the
	// controller reading listen-only again, with the time since the kill.
	KilledLine     = "FIELDTAP-HWTEST KILLED"
	ListenOnlyLine = "FIELDTAP-HWTEST LISTENONLY"
	// LinkLine answers a "link IF up|down" the host typed on the console
	// (QEMU's stdin), once the guest has set the link: LinkLine IF HOW.
	LinkLine = "FIELDTAP-HWTEST LINK"
	// TunnelsLine answers a "tunnels N" typed on the console once `guest
	// tunnels` has sent N INVITEs into each tunnel link: sent=N and each
	// link's tx_packets (NAME=COUNT).
	TunnelsLine = "FIELDTAP-HWTEST TUNNELS"
	// ECULine is `guest ecu`: started, each toggle of its bit once a
	// frame carries it (press=N bit=B), and stopped with its frame count.
	ECULine = "FIELDTAP-HWTEST ECU"
	// MarksLine answers "marks" typed on the console: the recorder's
	// marks.json (MarksFile) on one line.
	MarksLine = "FIELDTAP-HWTEST MARKS"
)

// The simulated ECU of the marks check (guest ecu): it sends ECUID on
// can1 every 20 ms (can0 captures it over the kvaser bus), a 4-bit
// rolling counter in byte 0 and, at DBC bit ECUBit (byte 1 bit 0), a state the
// host toggles just before each press of the confirm button.
const (
	ECUID  = 0x18FF2021 // priority 6, proprietary-B PGN 0xFF20, SA 0x21
	ECUBit = 8
)

// Remote SPAN made by the guest's kernel: tunnel links (gretap, erspan
// type II and III, ip6gretap) from TunnelLocal to TunnelRemote over the
// dummy device TunnelUnderlay, which the port TunnelPort captures as a
// collector's port would. Nothing answers at the far end.
const (
	TunnelUnderlay = "tun0"
	TunnelPort     = "tun"
)

var (
	TunnelLocal   = netip.MustParseAddr("10.77.0.1")
	TunnelRemote  = netip.MustParseAddr("10.77.0.2")
	TunnelLocal6  = netip.MustParseAddr("fd77::1")
	TunnelRemote6 = netip.MustParseAddr("fd77::2")
)

// MCPPort is fieldtapd's HTTP port inside the guest; QEMU forwards a host
// port to it.
const MCPPort = 8731

// RecorderMount is where the guest mounts the virtio disk (ext4, made on
// the host) that the recorder writes to; the host reads it back after
// killing QEMU (the power-cut check).
const RecorderMount = "/var/lib/fieldtap/rec"

// MarksFile is the recorder's journal of marks (services/recorder).
const MarksFile = RecorderMount + "/recorder/marks.json"

// DiskMounted is printed once the recorder's disk is mounted.
const DiskMounted = "hwtest: recorder disk mounted"

// Token is the bearer token the host presents; the guest's tokens file
// holds its SHA-256 (TokensFile), written by Image.Build.
const Token = "hwtest-bearer-token-not-secret"

// TxToken carries the transmit scope as well: over HTTP the gatekeeper
// sends only for such a token (services/transmit, gate scope).
const TxToken = "hwtest-transmit-token-not-secret"

// Bundles are every bundle the checks call: the defaults plus transmit,
// which is never loaded unless named, and the opt-in timeline and canre
// (what_happened, can_re_analyse) for the marks check.
const Bundles = "server,can,j1939,sip,media,j1708,transmit,timeline,canre"

// Lines of the qemu-virt profile's PL061 the checks drive and read.
const (
	ArmLine     = "gpiochip0:4" // held by the host over qtest (set_irq_in)
	ConfirmLine = "gpiochip0:3" // pulsed by QMP system_powerdown
)

// The frames the transmit checks send on can0: proprietary-B PGNs (0xFF00,
// 0xFF01) from the off-board tool address 0xF9, which no analyser acts on.
// KillID is the long plan `guest killon` interrupts after KillAfter frames.
const (
	KillID    = "18FF01F9"
	KillAfter = 5
)

// The CAN FD port: a vcan with mtu 72 (CANFD_MTU), which carries CAN FD
// frames, captured as FDPort beside the sja1000 can0. guest cansendfd
// puts J1939-22 Multi-PG frames on it with id FDMultiPGID: priority 6,
// PGN 0x2500 to global, from source address 0x01.
const (
	FDDevice    = "vcan0"
	FDPort      = "fd0"
	FDMultiPGID = 0x1825FF01
)

// GuestConfig is /etc/fieldtap/fieldtapd.toml: a port on the kernel
// tunnels' underlay, the profile's can0 with transmit enabled (a [[port]]
// replaces the profile's port of that name), the CAN FD port FDPort on
// the vcan FDDevice,
// the audit file the gatekeeper needs before it sends anything, and the
// confirm button required: every send waits for a press of PL061 line 3.
// button_wait covers reading the blink code from the host (up to two
// cycles of about 10 s under TCG) before pressing.
const GuestConfig = `board = "qemu-virt"
# The profile's 128 MiB holds its own ports; the tunnel underlay's port
# adds a 16 MiB AF_PACKET ring and its hand-off, and the timeline bundle
# the UDS stores (11.6 MiB over three CAN ports); the guest has 512 MiB.
memory_limit_mib = 224

[recorder]
enabled = true
dir = "` + RecorderMount + `/recorder"

[transmit]
audit_file = "/var/lib/fieldtap/transmit.jsonl"
require_button = true
button_wait = "60s"

[[port]]
name = "` + TunnelPort + `"
driver = "afpacket"
device = "` + TunnelUnderlay + `"

[[port]]
name = "can0"
driver = "socketcan"
device = "can0"
bitrate = 250000
transmit = true

[[port]]
name = "` + FDPort + `"
driver = "socketcan"
device = "` + FDDevice + `"
`

// InitScript returns the guest's /init: mount, load modules in order, bring up
// eth0 for QEMU's user network, set both CAN controllers to 250 kbit/s,
// run the GPIO contract tests on the real PL061 lines, start a frame
// reader on can1, the mid-plan killer and the reader of the host's
// console commands ("link IF up|down", "tunnels N"), start fieldtapd through the
// image's own init script (buildroot's S90fieldtapd, whose respawn loop
// restarts it) on the qemu-virt profile with GuestConfig (dropping to user
// fieldtap), print Ready once it listens, then keep J1939 frames flowing
// from can1 and print kernel counters once a second.
func InitScript() string {
	return `#!/bin/sh
/bin/busybox --install -s /bin
export PATH=/sbin:/usr/sbin:/bin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m || echo "hwtest: insmod $m failed"
done
mount -t configfs none /sys/kernel/config
ip link set lo up
ip addr add 10.0.2.15/24 dev eth0
ip link set eth0 up
ip route add default via 10.0.2.2
# The underlay of the kernel's tunnels (guest tunnels): a dummy device
# sends nothing anywhere, and AF_PACKET sees what the kernel puts on it.
ip link add ` + TunnelUnderlay + ` type dummy
echo 0 >/proc/sys/net/ipv6/conf/` + TunnelUnderlay + `/accept_dad
ip addr add ` + TunnelLocal.String() + `/24 dev ` + TunnelUnderlay + `
ip -6 addr add ` + TunnelLocal6.String() + `/64 dev ` + TunnelUnderlay + `
ip link set ` + TunnelUnderlay + ` up
/bin/guest canup can0 250000 || echo "hwtest: can0 not up"
/bin/guest canup can1 250000 || echo "hwtest: can1 not up"
# The CAN FD port: a vcan whose mtu 72 lets it carry struct canfd_frame.
ip link add ` + FDDevice + ` type vcan && ip link set ` + FDDevice + ` mtu 72 up || echo "hwtest: ` + FDDevice + ` not up"
echo "hwtest: ` + FDDevice + ` mtu $(cat /sys/class/net/` + FDDevice + `/mtu)"
echo "hwtest: net $(ls /sys/class/net | tr '\n' ' ')"
echo "hwtest: tty $(ls /dev | grep -E '^tty(S|AMA)[0-9]' | tr '\n' ' ')"
echo "hwtest: gpio $(ls /dev | grep gpiochip | tr '\n' ' ')"
FIELDTAP_ARM_LINE=` + ArmLine + ` FIELDTAP_CONFIRM_LINE=` + ConfirmLine + ` /bin/board.test -test.run 'TestArmSwitchOnChip|TestConfirmButtonOnChip' -test.v 2>&1
auth=
if /bin/fieldtapd -h 2>&1 | grep -q mcp-tokens-file; then
	auth="--mcp-tokens-file /etc/fieldtap/tokens"
	echo "hwtest: auth on"
else
	echo "hwtest: auth off (this build has no --mcp-tokens-file)"
fi
# What an mdev or udev rule does on a real image: the unprivileged
# daemon's user may open the serial ports, the GPIO chip and the tokens.
mkdir -p /var/lib/fieldtap /var/run /var/log ` + RecorderMount + `
if [ -b /dev/vda ] && mount -t ext4 /dev/vda ` + RecorderMount + `; then
	echo "` + DiskMounted + `"
else
	echo "hwtest: no recorder disk: recording to the initramfs"
fi
chown fieldtap /dev/ttyS0 /dev/ttyS1 /dev/gpiochip0 /etc/fieldtap/tokens /var/lib/fieldtap ` + RecorderMount + `
/bin/guest candump can1 &
/bin/guest killon can1 ` + KillID + ` ` + strconv.Itoa(KillAfter) + ` can0 &
# What the host types on the console: "link IF up" or "link IF down", as
# an operator would at the box's shell; each is answered once done.
# "ecu start|press|stop" runs the simulated ECU of the marks check and
# toggles its bit; "marks" prints the recorder's marks.json.
while read -r cmd dev how; do
	if [ "$cmd" = link ] && { [ "$how" = up ] || [ "$how" = down ]; }; then
		ip link set "$dev" "$how" && echo "` + LinkLine + ` $dev $how"
	elif [ "$cmd" = tunnels ]; then
		/bin/guest tunnels "$dev" || echo "hwtest: guest tunnels failed"
	elif [ "$cmd" = ecu ] && [ "$dev" = start ]; then
		/bin/guest ecu can1 &
		ecu=$!
	elif [ "$cmd" = ecu ] && [ "$dev" = press ]; then
		kill -USR1 "$ecu"
	elif [ "$cmd" = ecu ] && [ "$dev" = stop ]; then
		kill "$ecu" && wait "$ecu"
	elif [ "$cmd" = marks ]; then
		echo "` + MarksLine + ` $(tr -d '\n' <` + MarksFile + `)"
	fi
done </dev/ttyAMA0 &
echo "FIELDTAPD_ARGS=\"--config /etc/fieldtap/fieldtapd.toml --mcp-bundles ` + Bundles + ` --user fieldtap --mcp-listen 0.0.0.0:8731 $auth\"" >>/etc/default/fieldtapd
/etc/init.d/S90fieldtapd start
until netstat -ltn | grep -q ':8731 '; do sleep 0.2; done
echo "` + Ready + `"
while true; do
	/bin/guest cansend can1 20 || sleep 1
	/bin/guest cansendfd ` + FDDevice + ` 5 || echo "hwtest: guest cansendfd failed"
	echo "` + StatLine + ` can0_rx=$(cat /sys/class/net/can0/statistics/rx_packets) can1_tx=$(cat /sys/class/net/can1/statistics/tx_packets) can0_tx=$(cat /sys/class/net/can0/statistics/tx_packets) can0_mode=$(/bin/guest canmode can0) eth1_rx=$(cat /sys/class/net/eth1/statistics/rx_packets) eth1_flags=$(cat /sys/class/net/eth1/flags) eth1_addrs=$(ip addr show eth1 | grep -c inet) eth1_noipv6=$(cat /proc/sys/net/ipv6/conf/eth1/disable_ipv6) ids=$(for p in $(pidof fieldtapd); do awk '/^Uid/{u=$2} /^CapEff/{c=$2} /^VmRSS/{r=$2} END{printf "%s/%s/%skB,", u, c, r}' /proc/$p/status; done) usb0=$(ip -4 addr show usb0 2>/dev/null | grep -o 'inet [0-9./]*')"
done
`
}

// DefaultFile is the guest's /etc/default/fieldtapd, which S90fieldtapd
// sources: fieldtapd's log goes to the console the host reads, and the
// program is where the initramfs keeps it. InitScript
// appends FIELDTAPD_ARGS once it knows whether auth is on.
const DefaultFile = `FIELDTAPD_LOG=/dev/console
FIELDTAPD_BIN=/bin/fieldtapd
`
