package netdecode

import (
	"slices"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// lineSink consumes whole lines and notes, per line, the frames that
// carried it (Stream.Frames), as the SIP analyser does per message.
type lineSink struct {
	lines  []string
	frames [][]uint64
	udp    [][]uint64
}

func (l *lineSink) UDP(d *Datagram) { l.udp = append(l.udp, slices.Clone(d.Frames)) }

func (l *lineSink) TCP(s *Stream, _ time.Time, b []byte) int {
	start := 0
	for i, c := range b {
		if c == '\n' {
			l.lines = append(l.lines, string(b[start:i]))
			l.frames = append(l.frames, slices.Clone(s.Frames(start, i+1)))
			start = i + 1
		}
	}
	return start
}

// TestTrackFramesNamesEveryFragmentAndSegment: a reassembled datagram
// names all its fragments, a message split over segments names all of
// them, and two messages sharing a segment both name it.
func TestTrackFramesNamesEveryFragmentAndSegment(t *testing.T) {
	whole := udpSeg("0123456789abcdefghijklmnopqrstuv")
	l := &lineSink{}
	d := New(Options{TrackFrames: true}, l)
	d.DecodeTagged(11, time.Unix(1, 0), wire.LinkRaw, ipv4(protoUDP, 7, 3, whole[24:]))
	d.DecodeTagged(10, time.Unix(1, 0), wire.LinkRaw, ipv4(protoUDP, 7, 0x2000, whole[:24]))
	d.DecodeTagged(12, time.Unix(1, 0), wire.LinkRaw, ipv4(protoUDP, 8, 0, udpSeg("one datagram")))
	if want := [][]uint64{{10, 11}, {12}}; !slices.EqualFunc(l.udp, want, slices.Equal) {
		t.Errorf("datagram frames %v, want %v (fragments in offset order)", l.udp, want)
	}
	segs := []struct {
		tag     uint64
		seq     uint32
		payload string
	}{
		{20, 100, "first li"}, {21, 108, "ne\nsecond"}, {22, 117, " line\nthi"}, {24, 126, "rd\n"},
	}
	for _, s := range segs {
		d.DecodeTagged(s.tag, time.Unix(2, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000, s.seq, 0, s.payload)))
	}
	want := [][]uint64{{20, 21}, {21, 22}, {22, 24}}
	if !slices.Equal(l.lines, []string{"first line", "second line", "third"}) || !slices.EqualFunc(l.frames, want, slices.Equal) {
		t.Errorf("lines %q frames %v, want frames %v", l.lines, l.frames, want)
	}
}

// TestTrackFramesOutOfOrder: a held segment keeps its own frame.
func TestTrackFramesOutOfOrder(t *testing.T) {
	l := &lineSink{}
	d := New(Options{TrackFrames: true}, l)
	d.DecodeTagged(1, time.Unix(1, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000, 99, tcpSYN, "")))
	d.DecodeTagged(3, time.Unix(1, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000, 104, 0, "ef\n")))
	d.DecodeTagged(2, time.Unix(1, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000, 100, 0, "abcd")))
	if len(l.frames) != 1 || !slices.Equal(l.frames[0], []uint64{2, 3}) {
		t.Errorf("frames %v, want [[2 3]]", l.frames)
	}
}

func TestNoTrackingByDefault(t *testing.T) {
	l := &lineSink{}
	d := New(Options{}, l)
	d.DecodeTagged(5, time.Unix(1, 0), wire.LinkRaw, ipv4(protoUDP, 8, 0, udpSeg("x")))
	d.DecodeTagged(6, time.Unix(1, 0), wire.LinkRaw, ipv4(protoTCP, 1, 0, tcpSeg(4000, 1, 0, "a\n")))
	if len(l.udp) != 1 || l.udp[0] != nil || len(l.frames) != 1 || len(l.frames[0]) != 0 {
		t.Errorf("untracked decoder gave frames: udp %v tcp %v", l.udp, l.frames)
	}
}
