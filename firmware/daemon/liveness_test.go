package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
	"fieldtap/firmware/supervise"
	"fieldtap/services/ports"
	"fieldtap/services/rtp"
)

// TestLivenessStates walks one port through a life, one look per step
// on a clock the test moves, and checks the state, since when, and what
// the look tells the watchdog to do.
func TestLivenessStates(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	const silentAfter = 60 * time.Second
	type step struct {
		name string
		// fail: an attempt failed just before this look, with the
		// arrivals counted then.
		fail    bool
		o       observation
		state   string
		since   time.Time
		restart bool
		wake    bool
	}
	live := []step{
		{name: "opened, nothing yet", o: observation{now: at(1), open: at(1), medium: capture.MediumUp}, state: ports.StateCapturing, since: t0},
		{name: "frames arrive", o: observation{now: at(5), arrivals: 10, open: at(1), medium: capture.MediumUp}, state: ports.StateCapturing, since: t0},
		{name: "quiet, within the allowance", o: observation{now: at(64), arrivals: 10, open: at(1), medium: capture.MediumUp}, state: ports.StateCapturing, since: t0},
		{name: "quiet past silent_after: silent since the last arrival", o: observation{now: at(65), arrivals: 10, open: at(1), medium: capture.MediumUp}, state: ports.StateSilent, since: at(5)},
		{name: "still silent, since unchanged", o: observation{now: at(300), arrivals: 10, open: at(1), medium: capture.MediumUp}, state: ports.StateSilent, since: at(5)},
		{name: "frames again", o: observation{now: at(301), arrivals: 11, open: at(1), medium: capture.MediumUp}, state: ports.StateCapturing, since: at(301)},
		{name: "carrier lost", o: observation{now: at(302), arrivals: 11, open: at(1), medium: capture.MediumDown}, state: ports.StateDown, since: at(302)},
		{name: "carrier back", o: observation{now: at(303), arrivals: 11, open: at(1), medium: capture.MediumUp}, state: ports.StateCapturing, since: at(303)},
		{name: "the interface went away under the open socket", o: observation{now: at(310), arrivals: 11, open: at(1), medium: capture.MediumGone}, state: ports.StateGone, since: at(310), restart: true},
		{name: "the attempt ended, the device still gone", fail: true, o: observation{now: at(311), arrivals: 11, medium: capture.MediumGone}, state: ports.StateGone, since: at(310)},
		{name: "reopening fails while it is gone", fail: true, o: observation{now: at(330), arrivals: 11, medium: capture.MediumGone}, state: ports.StateGone, since: at(310)},
		{name: "back, set down: the waiting supervisor is woken", o: observation{now: at(340), arrivals: 11, medium: capture.MediumDown}, state: ports.StateRestarting, since: at(340), wake: true},
		{name: "reopening, no second wake", o: observation{now: at(341), arrivals: 11, medium: capture.MediumUp}, state: ports.StateRestarting, since: at(340)},
		{name: "open again, link down", o: observation{now: at(342), arrivals: 11, open: at(342), medium: capture.MediumDown}, state: ports.StateDown, since: at(342)},
		{name: "link up: a fresh allowance from the open", o: observation{now: at(343), arrivals: 11, open: at(342), medium: capture.MediumUp}, state: ports.StateCapturing, since: at(343)},
		{name: "quiet for silent_after since the open", o: observation{now: at(402), arrivals: 11, open: at(342), medium: capture.MediumUp}, state: ports.StateSilent, since: at(342)},
		{name: "frames, then the link set down fails the read before a look saw them: restarting, not down", fail: true, o: observation{now: at(403), arrivals: 15, medium: capture.MediumDown}, state: ports.StateRestarting, since: at(403)},
		{name: "given up (ErrPermanent)", o: observation{now: at(404), arrivals: 15, ended: at(403), medium: capture.MediumUp}, state: ports.StateEnded, since: at(403)},
	}
	walk := func(t *testing.T, l *liveness, steps []step) {
		for _, s := range steps {
			if s.fail {
				l.fail(s.o.arrivals)
			}
			v := l.look(s.o)
			state, since := l.current()
			if state != s.state || !since.Equal(s.since) || v.restart != s.restart || v.wake != s.wake {
				t.Errorf("%s: %s since %v, restart %v, wake %v; want %s since %v, restart %v, wake %v",
					s.name, state, since.Format(time.TimeOnly), v.restart, v.wake, s.state, s.since.Format(time.TimeOnly), s.restart, s.wake)
			}
			if v.to != state {
				t.Errorf("%s: verdict says %s, state is %s", s.name, v.to, state)
			}
		}
	}
	t.Run("live port", func(t *testing.T) { walk(t, newLiveness(true, silentAfter, t0), live) })
	t.Run("a source that does not say when it opens", func(t *testing.T) {
		walk(t, newLiveness(true, silentAfter, t0), []step{
			{name: "failed", fail: true, o: observation{now: at(1)}, state: ports.StateRestarting, since: at(1)},
			{name: "delivering again: reopened", o: observation{now: at(2), arrivals: 1}, state: ports.StateCapturing, since: at(2)},
		})
	})
	t.Run("finite port", func(t *testing.T) {
		walk(t, newLiveness(false, silentAfter, t0), []step{
			{name: "delivering", o: observation{now: at(1), arrivals: 100}, state: ports.StateCapturing, since: t0},
			{name: "no frame for longer than silent_after: files are never silent", o: observation{now: at(600), arrivals: 100}, state: ports.StateCapturing, since: t0},
			{name: "drained", o: observation{now: at(601), arrivals: 100, ended: at(600)}, state: ports.StateEnded, since: at(600)},
		})
	})
}

// probedSource is a live CAN source whose medium the test sets: each
// attempt opens, delivers one frame and runs until it is cancelled.
type probedSource struct {
	counters capture.Counters
	medium   atomic.Value // capture.Medium
	opened   chan int     // the attempt number, once it is open
	attempts int
}

func (s *probedSource) Name() string          { return "can8" }
func (s *probedSource) Kind() capture.Kind    { return capture.KindCAN }
func (s *probedSource) Origin() string        { return "socketcan:can8" }
func (s *probedSource) Live() bool            { return true }
func (s *probedSource) Stats() capture.Stats  { return s.counters.Snapshot() }
func (s *probedSource) Probe() capture.Medium { return s.medium.Load().(capture.Medium) }
func (s *probedSource) set(m capture.Medium)  { s.medium.Store(m) }
func (s *probedSource) Run(ctx context.Context, out *capture.Handoff) error {
	s.attempts++
	s.counters.Opened(time.Now())
	defer s.counters.Closed()
	b, _ := wire.EncodeCAN(wire.CANEFF|0x18FEF100, []byte{byte(s.attempts)})
	out.Offer(capture.Frame{Time: time.Now(), Link: wire.LinkCANSocketCAN, Data: b})
	s.opened <- s.attempts
	<-ctx.Done()
	return nil
}

var (
	_ capture.Source = (*probedSource)(nil)
	_ capture.Prober = (*probedSource)(nil)
)

// lockedLog is a text log the test reads while the port writes it.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWatchdogRestartsAPortWhoseDeviceWentAndWakesItWhenBack: the
// device under an open attempt goes away; the watchdog ends the attempt
// (the supervisor counts the restart) and shows the port gone; when the
// device is back it wakes the supervisor out of an hour's backoff, and
// the port captures again. Looks are asked for with poke, as a link
// event does.
func TestWatchdogRestartsAPortWhoseDeviceWentAndWakesItWhenBack(t *testing.T) {
	src := &probedSource{opened: make(chan int, 4)}
	src.set(capture.MediumUp)
	an := testAnalysers(t, rtp.Options{}, src)
	hour := supervise.Options{MinBackoff: time.Hour, MaxBackoff: time.Hour, Healthy: time.Hour}
	p, err := newPort(src, an, portOptions{depth: 8, supervise: hour})
	if err != nil {
		t.Fatal(err)
	}
	var logged lockedLog
	log := slog.New(slog.NewTextHandler(&logged, nil))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	p.run(ctx, &wg, log)
	opened := func(want int) {
		t.Helper()
		select {
		case n := <-src.opened:
			if n != want {
				t.Fatalf("attempt %d opened, want %d", n, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("attempt %d never opened: %+v", want, p.status())
		}
	}
	until := func(what string, ok func(ports.Status) bool) ports.Status {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			p.poke()
			if st := p.status(); ok(st) {
				return st
			} else if time.Now().After(deadline) {
				t.Fatalf("never %s: %+v", what, st)
			}
		}
	}
	opened(1)
	until("capturing", func(st ports.Status) bool { return st.State == ports.StateCapturing && st.Frames == 1 })

	src.set(capture.MediumGone)
	gone := until("gone with a restart counted", func(st ports.Status) bool {
		return st.State == ports.StateGone && st.Restarts == 0 && st.LastError != ""
	})
	if !strings.Contains(gone.LastError, "watchdog: socketcan:can8: device gone") || gone.StateSince == nil {
		t.Errorf("gone: last error %q since %v, want the watchdog's reason and a time", gone.LastError, gone.StateSince)
	}

	src.set(capture.MediumUp)
	p.poke()
	opened(2) // only the wake could start it within the hour's backoff
	back := until("capturing again", func(st ports.Status) bool { return st.State == ports.StateCapturing && st.Frames == 2 })
	if back.Restarts != 1 || !back.StateSince.After(*gone.StateSince) {
		t.Errorf("back: %d restarts, since %v (gone since %v); want 1 and a later since", back.Restarts, back.StateSince, gone.StateSince)
	}
	out := logged.String()
	for _, want := range []string{"state=gone was=capturing", "state=restarting was=gone", "state=capturing was=restarting", "port device back"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// TestQuietLivePortIsSilentNotRestarted: a live port whose device is
// there and up but delivers nothing past silent_after is shown silent
// since it opened, and its attempt is left running.
func TestQuietLivePortIsSilentNotRestarted(t *testing.T) {
	src := &probedSource{opened: make(chan int, 4)}
	src.set(capture.MediumUp)
	an := testAnalysers(t, rtp.Options{}, src)
	p, err := newPort(src, an, portOptions{depth: 8, silentAfter: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	p.run(ctx, &wg, slog.New(slog.NewTextHandler(&lockedLog{}, nil)))
	<-src.opened
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		p.poke()
		st := p.status()
		if st.State == ports.StateSilent {
			if st.Restarts != 0 || st.StateSince == nil {
				t.Errorf("silent port: %+v, want no restart and a since", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never silent: %+v", st)
		}
	}
	if len(src.opened) != 0 {
		t.Errorf("attempt %d opened: a silent port was restarted", <-src.opened)
	}
}
