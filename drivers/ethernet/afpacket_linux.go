//go:build linux

package ethernet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/devwatch"
	"fieldtap/drivers/wire"
)

// ethPAll is ETH_P_ALL in network byte order, as bind(2) wants it.
const ethPAll = uint16(unix.ETH_P_ALL<<8&0xff00 | unix.ETH_P_ALL>>8)

// Run is one attempt: open the interface and capture until ctx ends or a
// read fails (the daemon's supervisor opens a new socket after a
// failure). The kernel statistics are read a last time before the socket
// closes and carried over to the next socket's, so the drops shown never
// go backwards.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	// The reader has a thread of its own, raised above the box's other
	// work where the system lets it (root or CAP_SYS_NICE): on a busy
	// two-core board the kernel then wakes it first when a block is
	// ready, and the ring, not the scheduler, sets what is lost.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer raiseThread()()
	r, err := s.open()
	if err != nil {
		s.counters.Error("open")
		return err
	}
	defer s.closeRing(r)
	err = s.read(ctx, r, out)
	if ctx.Err() != nil {
		return nil
	}
	s.counters.Error("read")
	return fmt.Errorf("ethernet: read %s: %w", s.opts.Device, err)
}

// readerNice is the nice value of the reader's thread when it may be
// raised: above every ordinary task (0), below the kernel's own threads.
const readerNice = -10

// raiseThread sets the calling thread's nice value to readerNice, if
// permitted, and returns what puts the old one back; the thread goes back
// to the Go runtime's pool after Run, and no other goroutine may inherit
// the priority. Linux keeps a nice value per thread (PRIO_PROCESS with a
// thread id).
func raiseThread() (restore func()) {
	tid := unix.Gettid()
	// getpriority(2) returns 20 - nice for PRIO_PROCESS.
	old, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return func() {}
	}
	if err := unix.Setpriority(unix.PRIO_PROCESS, tid, readerNice); err != nil {
		return func() {} // not permitted: the reader runs at the box's priority
	}
	return func() { unix.Setpriority(unix.PRIO_PROCESS, tid, 20-old) }
}

// ring is one TPACKET_V3 socket and its memory-mapped ring of blocks.
type ring struct {
	fd      int
	ifindex int // the interface it is bound to
	mem     []byte
	size    int // block size
	n       int // blocks
	next    int // the block to read next, in ring order
	// slots bounds the blocks handed off and not yet released: each
	// carries the frame list (and VLAN rewrite buffer) its batch uses.
	// The kernel keeps filling the other blocks meanwhile, so the ring,
	// not the Go heap, is where a slow analyser's backlog waits.
	slots chan *slot
	made  int
	// drops and freezes sum the kernel's clear-on-read counters.
	drops, freezes uint64
}

type slot struct {
	frames []capture.Frame
	vlan   []byte // frames whose 802.1Q tag the NIC stripped, rewritten with it
}

// open creates the socket (protocol 0, so it queues nothing yet), sets up
// the ring, attaches the filter, binds to the interface and turns on
// promiscuous mode (dropped by the kernel when the socket closes).
func (s *Source) open() (*ring, error) {
	o := s.opts
	ifi, err := net.InterfaceByName(o.Device)
	if err != nil {
		return nil, fmt.Errorf("ethernet: open %s: %w", o.Device, err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("ethernet: open %s: socket: %w", o.Device, err)
	}
	r := &ring{fd: fd, ifindex: ifi.Index, size: o.BlockSize, n: o.NumBlocks, slots: make(chan *slot, maxInflightBlocks)}
	prog := make([]unix.SockFilter, len(s.filter))
	for i, ins := range s.filter {
		prog[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	if err := r.setup(o, prog, ifi.Index); err != nil {
		r.close()
		return nil, fmt.Errorf("ethernet: open %s: %w", o.Device, err)
	}
	// This socket's kernel counters start at zero (the read clears
	// them), on top of the earlier sockets'; both causes are visible in
	// capture_status before the first loss.
	if _, err := unix.GetsockoptTpacketStatsV3(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err != nil {
		r.close()
		return nil, fmt.Errorf("ethernet: open %s: statistics: %w", o.Device, err)
	}
	s.publishKernel(r)
	s.bound.Store(int32(ifi.Index))
	s.counters.Opened(time.Now())
	return r, nil
}

func (r *ring) setup(o Options, filter []unix.SockFilter, ifindex int) error {
	if err := unix.SetsockoptInt(r.fd, unix.SOL_PACKET, unix.PACKET_VERSION, unix.TPACKET_V3); err != nil {
		return fmt.Errorf("TPACKET_V3: %w", err)
	}
	req := unix.TpacketReq3{
		Block_size:     uint32(o.BlockSize),
		Block_nr:       uint32(o.NumBlocks),
		Frame_size:     frameSize,
		Frame_nr:       uint32(o.BlockSize / frameSize * o.NumBlocks),
		Retire_blk_tov: uint32(o.BlockTimeout / time.Millisecond),
	}
	if err := unix.SetsockoptTpacketReq3(r.fd, unix.SOL_PACKET, unix.PACKET_RX_RING, &req); err != nil {
		return fmt.Errorf("ring of %d × %d bytes: %w", o.NumBlocks, o.BlockSize, err)
	}
	mem, err := unix.Mmap(r.fd, 0, o.BlockSize*o.NumBlocks, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("mmap ring: %w", err)
	}
	r.mem = mem
	if len(filter) > 0 {
		prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
		if err := unix.SetsockoptSockFprog(r.fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &prog); err != nil {
			return fmt.Errorf("attach filter: %w", err)
		}
	}
	if err := unix.Bind(r.fd, &unix.SockaddrLinklayer{Protocol: ethPAll, Ifindex: ifindex}); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	mreq := unix.PacketMreq{Ifindex: int32(ifindex), Type: unix.PACKET_MR_PROMISC}
	if err := unix.SetsockoptPacketMreq(r.fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mreq); err != nil {
		return fmt.Errorf("promiscuous: %w", err)
	}
	return nil
}

// reclaim takes back every slot handed off: a batch's frames borrow the
// ring, so it may not be unmapped while the analysers hold one. The
// consumer drains the hand-off until the port stops, after Run returns,
// so every slot comes back.
func (r *ring) reclaim() {
	for range r.made {
		<-r.slots
	}
	r.made = 0
}

func (r *ring) close() {
	if r.mem != nil {
		unix.Munmap(r.mem)
	}
	unix.Close(r.fd)
}

// block returns block i's header.
func (r *ring) block(i int) *unix.TpacketHdrV1 {
	desc := (*unix.TpacketBlockDesc)(unsafe.Pointer(&r.mem[i*r.size]))
	return (*unix.TpacketHdrV1)(unsafe.Pointer(&desc.Hdr[0]))
}

// read hands each block the kernel retires off as one batch; the batch's
// release gives the block back to the kernel.
func (s *Source) read(ctx context.Context, r *ring, out *capture.Handoff) error {
	nextStats := time.Now().Add(statsInterval)
	pfd := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN | unix.POLLERR}}
	for ctx.Err() == nil {
		hdr := r.block(r.next)
		if atomic.LoadUint32(&hdr.Block_status)&unix.TP_STATUS_USER == 0 {
			_, err := unix.Poll(pfd, int(s.opts.PollTimeout/time.Millisecond))
			if err != nil && !errors.Is(err, unix.EINTR) {
				return fmt.Errorf("poll: %w", err)
			}
			// The error stays on the socket until read: unread, every
			// poll returns at once and the loop spins.
			if err == nil && pfd[0].Revents&unix.POLLERR != 0 {
				if err := s.socketError(r); err != nil {
					return err
				}
			}
			if atomic.LoadUint32(&hdr.Block_status)&unix.TP_STATUS_USER == 0 {
				s.readKernelStats(r) // idle: a good moment, and losses show even on a quiet port
				nextStats = time.Now().Add(statsInterval)
				continue
			}
		}
		sl, err := r.slot(ctx)
		if err != nil {
			return nil // cancelled while the analysers held every slot
		}
		s.batch(r, r.next, hdr, sl)
		if len(sl.frames) == 0 {
			// An empty block (the timeout retired it with nothing) goes
			// straight back.
			r.release(hdr, sl)
		} else {
			b := capture.NewBatch(sl.frames, func() { r.release(hdr, sl) })
			if err := out.PutBatch(ctx, b); err != nil {
				return nil
			}
		}
		r.next = (r.next + 1) % r.n
		if now := time.Now(); now.After(nextStats) {
			s.readKernelStats(r)
			nextStats = now.Add(statsInterval)
		}
	}
	return nil
}

// socketError takes the error the kernel left on the socket (reading it
// clears it). ENETDOWN while the interface the socket is bound to is
// still there is the link set down: the kernel hooks the socket in again
// when the link comes up, so capture goes on, the pause counted as
// ReasonLinkDown. Anything else ends the attempt, and so does ENETDOWN
// from an interface that went away or came back with another index
// (the kernel unbound the socket: it would never capture again).
func (s *Source) socketError(r *ring) error {
	errno, err := unix.GetsockoptInt(r.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	switch {
	case err != nil:
		return fmt.Errorf("socket error: %w", err)
	case errno == 0:
		return nil
	}
	e := unix.Errno(errno)
	if e != unix.ENETDOWN {
		return fmt.Errorf("socket: %w", e)
	}
	if devwatch.InterfaceMedium(s.opts.Device, r.ifindex) == capture.MediumGone {
		return fmt.Errorf("interface gone (the socket was bound to index %d): %w", r.ifindex, e)
	}
	s.counters.Error(ReasonLinkDown)
	return nil
}

// slot takes a free slot, waiting for the analysers to release one when
// maxInflightBlocks blocks are with them.
func (r *ring) slot(ctx context.Context) (*slot, error) {
	select {
	case sl := <-r.slots:
		return sl, nil
	default:
	}
	if r.made < maxInflightBlocks {
		r.made++
		return &slot{}, nil
	}
	select {
	case sl := <-r.slots:
		return sl, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// release gives a block back to the kernel and its slot to the reader.
func (r *ring) release(hdr *unix.TpacketHdrV1, sl *slot) {
	atomic.StoreUint32(&hdr.Block_status, unix.TP_STATUS_KERNEL)
	r.slots <- sl
}

// batch lists block i's frames into sl, their data borrowing the ring.
func (s *Source) batch(r *ring, i int, hdr *unix.TpacketHdrV1, sl *slot) {
	base := i * r.size
	sl.frames, sl.vlan = sl.frames[:0], sl.vlan[:0]
	off := int(hdr.Offset_to_first_pkt)
	for range hdr.Num_pkts {
		if off <= 0 || off+int(unsafe.Sizeof(unix.Tpacket3Hdr{})) > r.size {
			s.counters.Error("ring_offset") // the kernel wrote a block we cannot walk: stop at it
			break
		}
		ph := (*unix.Tpacket3Hdr)(unsafe.Pointer(&r.mem[base+off]))
		start := base + off + int(ph.Mac)
		end := start + int(ph.Snaplen)
		if int(ph.Mac) < int(unsafe.Sizeof(unix.Tpacket3Hdr{})) || end > base+r.size {
			s.counters.Error("ring_offset")
			break
		}
		data := r.mem[start:end:end]
		orig := int(ph.Len)
		if ph.Status&unix.TP_STATUS_VLAN_VALID != 0 && len(data) >= 12 {
			// Put back the 802.1Q tag the NIC stripped: VLANs are part of
			// a SPAN capture. tp_len does not count it.
			tpid := uint16(unix.ETH_P_8021Q)
			if ph.Status&unix.TP_STATUS_VLAN_TPID_VALID != 0 && ph.Hv1.Vlan_tpid != 0 {
				tpid = ph.Hv1.Vlan_tpid
			}
			at := len(sl.vlan)
			sl.vlan = append(sl.vlan, data[:12]...)
			sl.vlan = binary.BigEndian.AppendUint16(sl.vlan, tpid)
			sl.vlan = binary.BigEndian.AppendUint16(sl.vlan, uint16(ph.Hv1.Vlan_tci))
			sl.vlan = append(sl.vlan, data[12:]...)
			data, orig = sl.vlan[at:len(sl.vlan):len(sl.vlan)], orig+4
		}
		sl.frames = append(sl.frames, capture.Frame{Time: time.Unix(int64(ph.Sec), int64(ph.Nsec)), Link: wire.LinkEthernet, Data: data, OrigLen: orig})
		if ph.Next_offset == 0 {
			break
		}
		off += int(ph.Next_offset)
	}
}

// readKernelStats publishes PACKET_STATISTICS, which the kernel clears
// on each read: the driver sums, so the values set are cumulative.
func (s *Source) readKernelStats(r *ring) {
	st, err := unix.GetsockoptTpacketStatsV3(r.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		s.counters.Error("kernel_stats")
		return
	}
	r.drops += uint64(st.Drops)
	r.freezes += uint64(st.Freeze_q_cnt)
	s.publishKernel(r)
}

// publishKernel shows r's counts added to the closed sockets'.
func (s *Source) publishKernel(r *ring) {
	s.counters.SetDrop(capture.DropKernel, s.closed.drops+r.drops)
	s.counters.SetDrop(DropKernelFreeze, s.closed.freezes+r.freezes)
}

// closeRing reads the statistics a last time, folds them into the totals
// of closed sockets, waits for the analysers to release every block they
// hold (their frames borrow the mapped ring), and closes the socket.
func (s *Source) closeRing(r *ring) {
	s.bound.Store(0)
	s.counters.Closed()
	s.readKernelStats(r)
	s.closed.drops += r.drops
	s.closed.freezes += r.freezes
	r.reclaim()
	r.close()
}
