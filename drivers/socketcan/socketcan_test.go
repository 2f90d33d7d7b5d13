package socketcan

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

var testTime = time.Unix(1_700_000_000, 0)

// raw lays out a struct can_frame in host byte order, as the socket does.
func raw(id uint32, data []byte) []byte {
	b := make([]byte, rawFrameSize)
	binary.NativeEndian.PutUint32(b, id)
	b[4] = byte(len(data))
	copy(b[8:], data)
	return b
}

func TestOptionsChecked(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{name: "defaults", o: Options{Interface: "can0"}},
		{name: "normal 500k", o: Options{Interface: "can0", Bitrate: 500_000, Mode: ModeNormal}},
		{name: "no interface", o: Options{}, wantErr: "no interface"},
		{name: "bitrate too high", o: Options{Interface: "can1", Bitrate: 2_000_000}, wantErr: "can1: bitrate 2000000"},
		{name: "bitrate too low", o: Options{Interface: "can1", Bitrate: 5}, wantErr: "bitrate 5"},
		{name: "unknown mode", o: Options{Interface: "can1", Mode: "loopback"}, wantErr: `mode "loopback"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.o)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.o.Mode == "" && s.opts.Mode != ModeListenOnly {
				t.Errorf("default mode = %q, want listen-only", s.opts.Mode)
			}
			if s.Name() != "can0" || s.opts.Bitrate == 0 || s.Origin() != "socketcan:can0" || !s.Live() {
				t.Errorf("defaults not applied: %+v", s.opts)
			}
		})
	}
}

// rawFD lays out a struct canfd_frame in host byte order, as a socket
// with CAN_RAW_FD_FRAMES reads it.
func rawFD(id uint32, flags uint8, data []byte) []byte {
	b := make([]byte, rawFDFrameSize)
	binary.NativeEndian.PutUint32(b, id)
	b[4], b[5] = byte(len(data)), flags
	copy(b[8:], data)
	return b
}

func TestDecodeRaw(t *testing.T) {
	over := raw(1, nil)
	over[4] = 9
	fdOver := rawFD(1, 0, nil)
	fdOver[4] = 65
	tests := []struct {
		name  string
		b     []byte
		id    uint32
		flags uint8
		n     int
		err   error
	}{
		{name: "extended", b: raw(0x80000000|0x18FECA00, []byte{1, 2, 3}), id: 0x80000000 | 0x18FECA00, n: 3},
		{name: "standard empty", b: raw(0x7FF, nil), id: 0x7FF},
		{name: "short", b: make([]byte, 8), err: errShortRead},
		{name: "between sizes", b: make([]byte, 40), err: errShortRead},
		{name: "fd 64 brs", b: rawFD(0x80000000|0x18FECA00, 0x01, make([]byte, 64)), id: 0x80000000 | 0x18FECA00, flags: wire.CANFDFDF | wire.CANFDBRS, n: 64},
		// Kernels from 6.0 set CANFD_FDF themselves; older ones do not.
		{name: "fd kernel fdf esi", b: rawFD(0x123, 0x04|0x02, make([]byte, 12)), id: 0x123, flags: wire.CANFDFDF | wire.CANFDESI, n: 12},
		{name: "fd empty", b: rawFD(0x123, 0, nil), id: 0x123, flags: wire.CANFDFDF},
		{name: "len 9", b: over, err: errLength},
		{name: "fd len 65", b: fdOver, err: errFDLength},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, flags, data, err := decodeRaw(tc.b)
			if !errors.Is(err, tc.err) || (err == nil && (id != tc.id || flags != tc.flags || len(data) != tc.n)) {
				t.Errorf("got %#x %#x % x %v", id, flags, data, err)
			}
		})
	}
}

// FuzzDecodeRaw reads anything as one socket read: no input panics, and
// a frame it takes is one wire encodes and decodes back the same.
func FuzzDecodeRaw(f *testing.F) {
	f.Add(raw(0x80000000|0x18FECA00, []byte{0, 0xFF, 0x64, 0, 3, 1, 0xFF, 0xFF}))
	f.Add(raw(0x7FF, nil))
	f.Add(rawFD(0x80000000|0x18FECA00, 0x05, make([]byte, 64)))
	f.Add(rawFD(0x123, 0x03, []byte{1, 2, 3}))
	f.Add(make([]byte, rawFDFrameSize+1))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, flags, data, err := decodeRaw(b)
		if err != nil {
			return
		}
		if flags != 0 {
			id &^= wire.CANRTR
		}
		enc, err := wire.AppendCANFrame(nil, id, flags, data)
		if err != nil {
			t.Fatalf("% x: decoded %#x %#x % x, which wire refuses: %v", b, id, flags, data, err)
		}
		id2, flags2, data2, err := wire.DecodeCANFD(enc)
		if err != nil || id2 != id || flags2 != flags || !slices.Equal(data2, data) {
			t.Fatalf("% x: %#x %#x % x came back %#x %#x % x %v", b, id, flags, data, id2, flags2, data2, err)
		}
	})
}

func TestParseCounter(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0\n", 0, true}, {"12345\n", 12345, true}, {"7", 7, true},
		{"", 0, false}, {"\n", 0, false}, {"-1\n", 0, false}, {"99999999999999999999\n", 0, false},
	}
	for _, tc := range tests {
		t.Run(strings.TrimSpace(tc.in), func(t *testing.T) {
			got, ok := parseCounter([]byte(tc.in))
			if got != tc.want || ok != tc.ok {
				t.Errorf("parseCounter(%q) = %d, %v", tc.in, got, ok)
			}
		})
	}
}

// fakeLink records calls and refuses changes while up, as the kernel does.
type fakeLink struct {
	st          linkState
	calls       []string
	ignoreMode  bool // a controller that cannot do listen-only
	failBitrate bool
}

func (f *fakeLink) state() (linkState, error) { return f.st, nil }
func (f *fakeLink) setDown() error            { f.calls = append(f.calls, "down"); f.st.Up = false; return nil }
func (f *fakeLink) setUp() error              { f.calls = append(f.calls, "up"); f.st.Up = true; return nil }
func (f *fakeLink) setBitrate(b uint32) error {
	f.calls = append(f.calls, "bitrate")
	if f.st.Up {
		return errors.New("device busy")
	}
	if f.failBitrate {
		return errors.New("invalid bitrate")
	}
	f.st.Bitrate = b
	return nil
}
func (f *fakeLink) setListenOnly(on bool) error {
	f.calls = append(f.calls, "mode")
	if f.st.Up {
		return errors.New("device busy")
	}
	if !f.ignoreMode {
		f.st.ListenOnly = on
	}
	return nil
}

func TestConfigure(t *testing.T) {
	tests := []struct {
		name    string
		link    fakeLink
		o       Options
		calls   []string
		wantErr string
		up      bool
	}{
		{name: "fresh link down", link: fakeLink{st: linkState{Kind: kindCAN}},
			o: Options{Bitrate: 250_000, Mode: ModeListenOnly}, calls: []string{"bitrate", "mode", "up"}, up: true},
		{name: "up in normal mode is taken down first", link: fakeLink{st: linkState{Kind: kindCAN, Up: true, Bitrate: 250_000}},
			o: Options{Bitrate: 250_000, Mode: ModeListenOnly}, calls: []string{"down", "mode", "up"}, up: true},
		{name: "already right is left alone", link: fakeLink{st: linkState{Kind: kindCAN, Up: true, Bitrate: 500_000, ListenOnly: true}},
			o: Options{Bitrate: 500_000, Mode: ModeListenOnly}, calls: nil, up: true},
		{name: "down but right is only brought up", link: fakeLink{st: linkState{Kind: kindCAN, Bitrate: 500_000, ListenOnly: true}},
			o: Options{Bitrate: 500_000, Mode: ModeListenOnly}, calls: []string{"up"}, up: true},
		{name: "normal mode on request", link: fakeLink{st: linkState{Kind: kindCAN, Up: true, Bitrate: 250_000, ListenOnly: true}},
			o: Options{Bitrate: 250_000, Mode: ModeNormal}, calls: []string{"down", "mode", "up"}, up: true},
		{name: "listen-only not honoured leaves the link down", link: fakeLink{st: linkState{Kind: kindCAN, Up: true, Bitrate: 250_000}, ignoreMode: true},
			o: Options{Bitrate: 250_000, Mode: ModeListenOnly}, calls: []string{"down", "mode", "up", "down"}, wantErr: "listen-only did not take effect"},
		{name: "bitrate refused stays down", link: fakeLink{st: linkState{Kind: kindCAN, Up: true, Bitrate: 250_000}, failBitrate: true},
			o: Options{Bitrate: 125_000, Mode: ModeListenOnly}, calls: []string{"down", "bitrate"}, wantErr: "set bitrate 125000"},
		{name: "vcan is only brought up", link: fakeLink{st: linkState{Kind: kindVCAN}},
			o: Options{Bitrate: 250_000, Mode: ModeListenOnly}, calls: []string{"up"}, up: true},
		{name: "vxcan up is untouched", link: fakeLink{st: linkState{Kind: kindVXCAN, Up: true}},
			o: Options{Bitrate: 250_000, Mode: ModeListenOnly}, calls: nil, up: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.link
			_, err := configure(&l, tc.o, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(l.calls, tc.calls) {
				t.Errorf("calls = %q, want %q", l.calls, tc.calls)
			}
			if l.st.Up != tc.up {
				t.Errorf("link up = %v, want %v", l.st.Up, tc.up)
			}
		})
	}
}
