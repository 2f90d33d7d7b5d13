// Package socketcan captures a Linux SocketCAN interface (can0, vcan0) as a
// capture.Source: a raw CAN socket of its own for capture, and
// go.einride.tech/can's candevice and transmitter.
//
// At start, for a real controller (link kind "can"), the Source sets the
// bitrate and the controller mode over netlink. The kernel refuses both
// while the link is up, so the link is taken down, changed, brought up,
// and read back; nothing is changed when it already matches. Listen-only is
// the default: the controller then never ACKs, never sends error frames and
// cannot transmit, so the box cannot disturb the bus. If listen-only was
// asked for and does not read back, the link is taken down again and the
// port fails. Virtual links (vcan, vxcan) have no controller: they are only
// brought up.
//
// The capture socket has CAN_RAW_FD_FRAMES on: on an FD-capable link (a
// controller in FD mode, a vcan with mtu 72) CAN FD frames arrive as
// struct canfd_frame and are stored with their BRS and ESI flags and up
// to 64 data bytes (wire.AppendCANFD); classic frames are read as
// before. Transmit stays classic CAN.
//
// The raw socket receives error frames too (CAN_ERR_FLAG). Each is
// classified by the class bits of its can_id and the detail bytes
// (linux/can/error.h) and counted under an "err_…" reason in
// Stats().Errors; bus-off and controller restarts update the bus state in
// Status. Error frames are also delivered like data frames, carrying
// wire.CANERR, so a capture file keeps them.
//
// Transmit (WriteFrame, for the transmit gatekeeper only) uses a second
// raw socket through einride's Transmitter, opened on the first write and
// closed on return to listen-only; it refuses unless the port is in normal
// mode, wanted and read back. SetMode records the wanted mode (what every
// session, restarted or not, configures) and bounces the link to apply
// it; the capture socket's one ENETDOWN per bounce is expected, counted
// as mode_bounce, and reading continues on the same socket.
//
// Capture time is the host's receive time (einride gives no kernel
// timestamps). The Linux code is in socketcan_linux.go; elsewhere Run
// returns ErrNotLinux so the package builds and its pure parts test on any
// machine.
package socketcan
