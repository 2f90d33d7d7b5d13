package socketcan

import (
	"context"
	"errors"
	"fieldtap/drivers/wire"
	"fmt"
	"net"
	"os"
	"slices"
	"syscall"
	"testing"
)

func TestSetMode(t *testing.T) {
	running := linkState{Kind: kindCAN, Up: true, Bitrate: DefaultBitrate, ListenOnly: true}
	tests := []struct {
		name       string
		link       fakeLink
		to         Mode
		wantCalls  []string
		wantWanted Mode
		wantDowns  int32 // ENETDOWNs the reader is told to expect
		wantErr    bool
	}{
		{name: "to normal bounces the link once", link: fakeLink{st: running}, to: ModeNormal,
			wantCalls: []string{"down", "mode", "up"}, wantWanted: ModeNormal, wantDowns: 1},
		{name: "already listen-only: nothing touched", link: fakeLink{st: running}, to: ModeListenOnly,
			wantWanted: ModeListenOnly},
		{name: "virtual link: only the wanted mode", link: fakeLink{st: linkState{Kind: kindVCAN, Up: true}}, to: ModeNormal,
			wantWanted: ModeNormal},
		{name: "normal that fails goes back to listen-only", link: fakeLink{st: linkState{Kind: kindCAN, Up: true, Bitrate: 125_000, ListenOnly: true}, failBitrate: true}, to: ModeNormal,
			wantCalls: []string{"down", "bitrate", "bitrate"}, wantWanted: ModeListenOnly, wantDowns: 1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Options{Interface: "can0"})
			if err != nil {
				t.Fatal(err)
			}
			l := tc.link
			s.linkFn = func() (link, error) { return &l, nil }
			err = s.SetMode(context.Background(), tc.to)
			if (err != nil) != tc.wantErr {
				t.Fatalf("SetMode = %v, want error %v", err, tc.wantErr)
			}
			if !slices.Equal(l.calls, tc.wantCalls) {
				t.Errorf("link calls %v, want %v", l.calls, tc.wantCalls)
			}
			if got := s.wantedMode(); got != tc.wantWanted {
				t.Errorf("wanted mode %q, want %q (what a restarted session configures)", got, tc.wantWanted)
			}
			if got := s.downs.Load(); got != tc.wantDowns {
				t.Errorf("expected ENETDOWNs %d, want %d", got, tc.wantDowns)
			}
		})
	}
	if err := (&Source{}).SetMode(context.Background(), "loopback"); err == nil {
		t.Error("an unknown mode was accepted")
	}
}

func TestExpectedDown(t *testing.T) {
	enetdown := &net.OpError{Op: "read", Net: "can", Err: os.NewSyscallError("read", syscall.ENETDOWN)}
	tests := []struct {
		name      string
		announced int32
		err       error
		want      bool
		wantLeft  int32
	}{
		{name: "announced bounce", announced: 1, err: enetdown, want: true},
		{name: "wrapped", announced: 1, err: fmt.Errorf("x: %w", enetdown), want: true},
		{name: "unannounced ENETDOWN is a fault", err: enetdown},
		{name: "other error never excused", announced: 1, err: syscall.EIO, wantLeft: 1},
		{name: "one bounce excuses one error", announced: 2, err: enetdown, want: true, wantLeft: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Source{}
			s.downs.Store(tc.announced)
			if got := s.expectedDown(tc.err); got != tc.want {
				t.Errorf("expectedDown = %v, want %v", got, tc.want)
			}
			if left := s.downs.Load(); left != tc.wantLeft {
				t.Errorf("announcements left %d, want %d", left, tc.wantLeft)
			}
			if tc.want && s.Stats().Errors[ReasonModeBounce] != 1 {
				t.Errorf("bounce not counted: %v", s.Stats().Errors)
			}
		})
	}
}

func TestToFrame(t *testing.T) {
	tests := []struct {
		name    string
		id      uint32
		data    []byte
		wantID  uint32
		wantExt bool
		wantErr bool
	}{
		{name: "29-bit request", id: wire.CANEFF | 0x18EA00F9, data: []byte{0xEC, 0xFE, 0x00}, wantID: 0x18EA00F9, wantExt: true},
		{name: "11-bit UDS", id: 0x7E0, data: []byte{0x03, 0x22, 0xF1, 0x90}, wantID: 0x7E0},
		{name: "11-bit out of range", id: 0x800, wantErr: true},
		{name: "remote frame", id: wire.CANRTR | 0x100, wantErr: true},
		{name: "error frame", id: wire.CANERR | 0x4, wantErr: true},
		{name: "nine bytes", id: 0x100, data: make([]byte, 9), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := toFrame(tc.id, tc.data)
			if (err != nil) != tc.wantErr {
				t.Fatalf("toFrame = %+v, %v; want error %v", f, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if f.ID != tc.wantID || f.IsExtended != tc.wantExt || int(f.Length) != len(tc.data) || string(f.Data[:f.Length]) != string(tc.data) {
				t.Errorf("frame %+v, want id %#x ext %v data % X", f, tc.wantID, tc.wantExt, tc.data)
			}
		})
	}
}

func TestWriteFrameRefusedUnlessNormal(t *testing.T) {
	s, err := New(Options{Interface: "can0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteFrame(context.Background(), 0x7E0, []byte{1}); !errors.Is(err, ErrListenOnly) {
		t.Errorf("listen-only WriteFrame = %v, want ErrListenOnly", err)
	}
	// Wanted normal but the controller still reads back listen-only (a
	// failed or pending bounce): still refused, nothing opened.
	s.wanted = ModeNormal
	s.update(func(st *Status) { st.LinkKind, st.ListenOnly = kindCAN, true })
	if err := s.WriteFrame(context.Background(), 0x7E0, []byte{1}); !errors.Is(err, ErrListenOnly) || s.txConn != nil {
		t.Errorf("read-back listen-only WriteFrame = %v (socket %v), want ErrListenOnly and no socket", err, s.txConn)
	}
	if err := s.WriteFrame(context.Background(), wire.CANRTR|1, nil); err == nil || errors.Is(err, ErrListenOnly) {
		t.Errorf("remote frame = %v, want a refusal before any mode check", err)
	}
}
