package transmit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sentFrame is one frame a fake writer saw.
type sentFrame struct {
	ID   uint32
	Data []byte
}

// recWriter records frames; onWrite, if set, runs after each write.
type recWriter struct {
	mu      sync.Mutex
	frames  []sentFrame
	fail    error
	onWrite func(id uint32, data []byte)
}

func (w *recWriter) WriteFrame(_ context.Context, id uint32, data []byte) error {
	if w.fail != nil {
		return w.fail
	}
	w.mu.Lock()
	w.frames = append(w.frames, sentFrame{id, append([]byte(nil), data...)})
	w.mu.Unlock()
	if w.onWrite != nil {
		w.onWrite(id, data)
	}
	return nil
}

func (w *recWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.frames)
}

// touchFails fails the test if any code path reaches the writer.
type touchFails struct{ t *testing.T }

func (w touchFails) WriteFrame(context.Context, uint32, []byte) error {
	w.t.Errorf("the writer was touched")
	return errors.New("touched")
}

type armFlag struct{ on atomic.Bool }

func (a *armFlag) Armed() bool { return a.on.Load() }

func armed() *armFlag { a := &armFlag{}; a.on.Store(true); return a }

type memAudit struct {
	mu   sync.Mutex
	recs []Record
	fail bool
}

func (a *memAudit) Record(_ context.Context, r Record) error {
	if a.fail {
		return errors.New("disk full")
	}
	a.mu.Lock()
	a.recs = append(a.recs, r)
	a.mu.Unlock()
	return nil
}

func (a *memAudit) events() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.recs {
		out = append(out, r.Event+":"+r.Gate)
	}
	return out
}

type modeLog struct {
	mu    sync.Mutex
	modes []Mode
}

func (m *modeLog) SetMode(_ context.Context, mode Mode) error {
	m.mu.Lock()
	m.modes = append(m.modes, mode)
	m.mu.Unlock()
	return nil
}

func (m *modeLog) last() Mode {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.modes) == 0 {
		return ""
	}
	return m.modes[len(m.modes)-1]
}

// bus is a fake CAN bus: a Writer, a Listener, and an ECU that answers.
type bus struct {
	mu   sync.Mutex
	subs []chan RxFrame
	ecu  func(b *bus, id uint32, data []byte)
	recWriter
}

func newBus(ecu func(b *bus, id uint32, data []byte)) *bus {
	b := &bus{ecu: ecu}
	b.onWrite = func(id uint32, data []byte) {
		if b.ecu != nil {
			go b.ecu(b, id, append([]byte(nil), data...))
		}
	}
	return b
}

func (b *bus) Listen(context.Context) (<-chan RxFrame, func()) {
	ch := make(chan RxFrame, 64)
	b.mu.Lock()
	b.subs = append(b.subs, ch)
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, c := range b.subs {
			if c == ch {
				b.subs = append(b.subs[:i], b.subs[i+1:]...)
			}
		}
	}
}

// emit puts an ECU frame on the bus.
func (b *bus) emit(id uint32, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.subs {
		c <- RxFrame{Time: time.Now(), ID: id, Data: data}
	}
}

// ecuPending holds the udsECU's frames waiting for flow control.
var ecuPending atomic.Pointer[[][]byte]

// fakeButton is a confirm button a test presses: AwaitPress announces
// each wait on waits (with the blinks it was asked to show) and returns
// at the next press, or with ctx's error.
type fakeButton struct {
	waits chan []int
	press chan time.Time
}

func newFakeButton() *fakeButton {
	return &fakeButton{waits: make(chan []int, 4), press: make(chan time.Time, 1)}
}

func (b *fakeButton) AwaitPress(ctx context.Context, blinks []int, armed func()) (time.Time, error) {
	armed()
	b.waits <- append([]int(nil), blinks...)
	select {
	case at := <-b.press:
		return at, nil
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}
