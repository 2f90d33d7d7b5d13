// Command guest runs inside the emulated board (hwtest) and does what
// busybox cannot: set a CAN controller's bitrate over netlink, put J1939
// frames on a CAN interface, print what else arrives on one, read a
// controller's mode back (busybox ip has no -d for CAN), and make the
// kernel's GRE and ERSPAN tunnel links (busybox ip has no tunnel options).
//
//	guest canup IF BITRATE   set bitrate, bring the link up
//	guest cansend IF N       send N J1939 frames, 10 ms apart
//	guest cansendfd IF N     send N CAN FD frames (64 bytes, BRS): J1939-22
//	                         Multi-PG frames of EEC1 from SA FDSource
//	guest candump IF         print every frame but our own EEC1 and the
//	                         ECU's as an RxLine
//	guest ecu IF             a simulated ECU: hwtest.ECUID every 20 ms, a
//	                         4-bit counter in byte 0, a bit (byte 1 bit 0)
//	                         that SIGUSR1 toggles, ECULine on each change;
//	                         SIGTERM (or ecuGiveUp) ends it
//	guest canmode IF         print listen-only or normal
//	guest tunnels N          make gretap, erspan II/III and ip6gretap links
//	                         over the dummy underlay, send N SIP INVITEs
//	                         into each, print a TunnelsLine
//	guest killon IF ID N CTRL
//	                         on the Nth frame with 29-bit ID on IF, SIGKILL
//	                         every fieldtapd, print a KilledLine with CTRL's
//	                         mode, then a ListenOnlyLine once CTRL reads
//	                         listen-only again
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"go.einride.tech/can"
	"go.einride.tech/can/pkg/candevice"
	"go.einride.tech/can/pkg/socketcan"
	"golang.org/x/sys/unix"

	"fieldtap/hwtest"
)

const (
	// eec1 is what cansend sends: priority 3, PGN 0xF004, SA 0x00.
	eec1 = 0x0CF00400
	// ctrlModeListenOnly is CAN_CTRLMODE_LISTENONLY from
	// include/uapi/linux/can/netlink.h.
	ctrlModeListenOnly = 0x02
)

// frameGap spaces frames so a listen-only receiver never overruns.
const frameGap = 10 * time.Millisecond

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "guest:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 5 && args[0] == "killon" {
		id, err := strconv.ParseUint(args[2], 16, 32)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(args[3])
		if err != nil {
			return err
		}
		return killOn(args[1], uint32(id), n, args[4])
	}
	if len(args) == 2 {
		switch args[0] {
		case "candump":
			return dump(args[1])
		case "ecu":
			return ecu(args[1])
		case "canmode":
			return mode(args[1])
		case "tunnels":
			n, err := strconv.Atoi(args[1])
			if err != nil {
				return err
			}
			return tunnels(n)
		}
	}
	if len(args) != 3 {
		return fmt.Errorf("usage: guest canup IF BITRATE | cansend IF N | candump IF | canmode IF | tunnels N")
	}
	n, err := strconv.Atoi(args[2])
	if err != nil {
		return err
	}
	switch args[0] {
	case "canup":
		d, err := candevice.New(args[1])
		if err != nil {
			return err
		}
		if err := d.SetBitrate(uint32(n)); err != nil {
			return fmt.Errorf("%s bitrate: %w", args[1], err)
		}
		return d.SetUp()
	case "cansend":
		return send(args[1], n)
	case "cansendfd":
		return sendFD(args[1], n)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// Bounds of killOn's watch after the kill: it polls the controller this
// often, and gives up after this long (the test then fails on the missing
// line).
const (
	modePoll    = 10 * time.Millisecond
	modeGiveUp  = 2 * time.Minute
	killCommand = "fieldtapd"
)

// killOn is a crash at a chosen moment: the Nth frame of a plan seen on
// the bus. It SIGKILLs every fieldtapd (the root parent and the
// unprivileged daemon), reports the controller's mode then, and how long
// until it is listen-only again (the restarted daemon's first act).
func killOn(ifname string, id uint32, n int, ctrl string) error {
	conn, err := socketcan.DialContext(context.Background(), "can", ifname)
	if err != nil {
		return err
	}
	defer conn.Close()
	rx := socketcan.NewReceiver(conn)
	seen := 0
	for seen < n && rx.Receive() {
		if f := rx.Frame(); f.IsExtended && f.ID == id {
			seen++
		}
	}
	if seen < n {
		return fmt.Errorf("%s closed after %d frames of %08X: %v", ifname, seen, id, rx.Err())
	}
	killed := time.Now()
	pids := killAll(killCommand)
	modeAt, _ := modeOf(ctrl)
	fmt.Printf("%s frames=%d pids=%v %s_mode=%s at=%s\n", hwtest.KilledLine, seen, pids, ctrl, modeAt, killed.UTC().Format(time.RFC3339Nano))
	for time.Since(killed) < modeGiveUp {
		if m, err := modeOf(ctrl); err == nil && m == "listen-only" {
			fmt.Printf("%s %s after_ms=%d\n", hwtest.ListenOnlyLine, ctrl, time.Since(killed).Milliseconds())
			return nil
		}
		time.Sleep(modePoll)
	}
	return fmt.Errorf("%s not listen-only %v after the kill", ctrl, modeGiveUp)
}

// killAll sends SIGKILL to every process named name and returns the pids.
func killAll(name string) []int {
	var pids []int
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		b, err := os.ReadFile(c)
		if err != nil || strings.TrimSpace(string(b)) != name {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(c)))
		if err == nil && syscall.Kill(pid, syscall.SIGKILL) == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// send puts EEC1 (PGN 61444, engine speed) from source address 0 on the
// bus: a J1939 frame every analyser recognises.
func send(ifname string, n int) error {
	ctx := context.Background()
	conn, err := socketcan.DialContext(ctx, "can", ifname)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx := socketcan.NewTransmitter(conn)
	for i := 0; i < n; i++ {
		rpm := uint16(800+i) * 8 // 0.125 rpm/bit
		f := can.Frame{ID: eec1, IsExtended: true, Length: 8,
			Data: can.Data{0xF0, 0x7D, 0x7D, byte(rpm), byte(rpm >> 8), 0x00, 0xF0, 0x7D}}
		if err := tx.TransmitFrame(ctx, f); err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		time.Sleep(frameGap)
	}
	return nil
}

// sendFD puts n CAN FD frames on ifname, a CAN FD capable link (a vcan
// with mtu 72): each a J1939-22 Multi-PG frame (PGN 0x2500 to global)
// from hwtest.FDSource holding one C-PG, EEC1 with the frame's number as
// engine speed, padded to 64 bytes, sent with BRS. einride's transmitter
// writes classic frames only, so this writes struct canfd_frame itself on
// a raw socket with CAN_RAW_FD_FRAMES.
func sendFD(ifname string, n int) error {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return err
	}
	fd, err := unix.Socket(unix.AF_CAN, unix.SOCK_RAW, unix.CAN_RAW)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_CAN_RAW, unix.CAN_RAW_FD_FRAMES, 1); err != nil {
		return fmt.Errorf("CAN_RAW_FD_FRAMES: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrCAN{Ifindex: ifi.Index}); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		var f [72]byte
		*(*uint32)(unsafe.Pointer(&f[0])) = hwtest.FDMultiPGID | unix.CAN_EFF_FLAG // host order, as the kernel reads it
		f[4], f[5] = 64, 0x01                                                      // len, CANFD_BRS
		rpm := uint16(900+i) * 8
		cpg := []byte{2 << 5, 0xF0, 0x04, 8, 0xF0, 0x7D, 0x7D, byte(rpm), byte(rpm >> 8), 0x00, 0xF0, 0x7D}
		copy(f[8:], cpg) // the rest stays 0: TOS 0, padding
		if _, err := unix.Write(fd, f[:]); err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		time.Sleep(frameGap)
	}
	return nil
}

// dump prints each frame on ifname that is not cansend's EEC1 or ecu's
// frames (the kernel loops those back to every socket on the sender's
// interface) as
// "RxLine ID#DATA", ID 8 hex digits for 29-bit and 3 for 11-bit.
func dump(ifname string) error {
	conn, err := socketcan.DialContext(context.Background(), "can", ifname)
	if err != nil {
		return err
	}
	defer conn.Close()
	rx := socketcan.NewReceiver(conn)
	for rx.Receive() {
		if rx.HasErrorFrame() {
			continue
		}
		f := rx.Frame()
		if f.IsExtended && (f.ID == eec1 || f.ID == hwtest.ECUID) {
			continue
		}
		id := fmt.Sprintf("%03X", f.ID)
		if f.IsExtended {
			id = fmt.Sprintf("%08X", f.ID)
		}
		fmt.Printf("%s %s %s#%X\n", hwtest.RxLine, ifname, id, f.Data[:f.Length])
	}
	return rx.Err()
}

// mode prints the controller mode as netlink reports it.
func mode(ifname string) error {
	m, err := modeOf(ifname)
	if err != nil {
		return err
	}
	fmt.Println(m)
	return nil
}

// modeOf reads the controller mode: "listen-only" or "normal".
func modeOf(ifname string) (string, error) {
	d, err := candevice.New(ifname)
	if err != nil {
		return "", err
	}
	info, err := d.Info()
	if err != nil {
		return "", err
	}
	if info.CtrlMode.Flags&ctrlModeListenOnly != 0 {
		return "listen-only", nil
	}
	return "normal", nil
}
