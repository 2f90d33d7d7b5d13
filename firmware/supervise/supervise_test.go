package supervise

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fast keeps the tests quick; the loop's logic does not depend on the
// durations.
var fast = Options{MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, Healthy: time.Hour}

func TestRunRestartsAfterFailures(t *testing.T) {
	cases := []struct {
		name     string
		results  []error // what each attempt returns; the attempt after the last blocks until cancelled
		restarts uint64
		lastErr  string
	}{
		{name: "read errors", results: []error{errors.New("read /dev/ttyUSB0: EIO"), errors.New("open /dev/ttyUSB0: no such file")}, restarts: 2, lastErr: "open /dev/ttyUSB0"},
		{name: "an early nil end is a failure", results: []error{nil}, restarts: 1, lastErr: ErrEnded.Error()},
		{name: "first attempt runs", results: nil, restarts: 0, lastErr: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(fast)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			running := make(chan struct{})
			attempt := 0
			done := make(chan error, 1)
			go func() {
				done <- s.Run(ctx, true, func(ctx context.Context) error {
					if attempt < len(tc.results) {
						attempt++
						return tc.results[attempt-1]
					}
					close(running)
					<-ctx.Done()
					return ctx.Err()
				})
			}()
			select {
			case <-running:
			case <-time.After(10 * time.Second):
				t.Fatalf("the last attempt never started: %+v", s.Status())
			}
			st := s.Status()
			if st.Restarts != tc.restarts || st.Attempts != tc.restarts+1 || !strings.Contains(st.LastError, tc.lastErr) || (tc.lastErr == "") != st.LastAt.IsZero() {
				t.Errorf("status %+v, want %d restarts and last error %q", st, tc.restarts, tc.lastErr)
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run after cancel = %v, want nil", err)
			}
		})
	}
}

func TestRunStopsOnAPermanentError(t *testing.T) {
	s, _ := New(fast)
	calls := 0
	err := s.Run(context.Background(), true, func(context.Context) error {
		calls++
		return fmt.Errorf("socketcan needs Linux: %w", ErrPermanent)
	})
	if !errors.Is(err, ErrPermanent) || calls != 1 || s.Status().Stopped == "" {
		t.Errorf("err %v after %d calls, status %+v: want one attempt and a stop", err, calls, s.Status())
	}
}

func TestRunDoesNotRestartAFinitePart(t *testing.T) {
	s, _ := New(fast)
	bad := errors.New("file.pcap: truncated at byte offset 96")
	calls := 0
	err := s.Run(context.Background(), false, func(context.Context) error { calls++; return bad })
	if !errors.Is(err, bad) || calls != 1 || s.Status().Restarts != 0 {
		t.Errorf("err %v after %d calls: want the file's error once", err, calls)
	}
}

func TestBackoffDoublesToItsCapAndResetsAfterAHealthyRun(t *testing.T) {
	o := Options{MinBackoff: time.Second, MaxBackoff: 8 * time.Second, Healthy: time.Minute}
	cases := []struct {
		name      string
		prev, ran time.Duration
		want      time.Duration
	}{
		{name: "first failure", prev: 0, ran: time.Millisecond, want: time.Second},
		{name: "doubles", prev: time.Second, ran: time.Millisecond, want: 2 * time.Second},
		{name: "doubles again", prev: 4 * time.Second, ran: time.Millisecond, want: 8 * time.Second},
		{name: "capped", prev: 8 * time.Second, ran: time.Millisecond, want: 8 * time.Second},
		{name: "a healthy run resets", prev: 8 * time.Second, ran: time.Minute, want: time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := o.next(tc.prev, tc.ran); got != tc.want {
				t.Errorf("next(%v, %v) = %v, want %v", tc.prev, tc.ran, got, tc.want)
			}
		})
	}
}

func TestOptionsChecked(t *testing.T) {
	if _, err := New(Options{MinBackoff: time.Second, MaxBackoff: time.Millisecond}); err == nil {
		t.Error("a cap below the first wait was accepted")
	}
	s, err := New(Options{})
	if err != nil || s.o.MinBackoff != DefaultMinBackoff || s.o.MaxBackoff != DefaultMaxBackoff || s.o.Healthy != DefaultHealthy {
		t.Errorf("defaults: %+v, %v", s.o, err)
	}
}

// slow waits an hour between attempts: a test that gets a second attempt
// got it from Wake.
var slow = Options{MinBackoff: time.Hour, MaxBackoff: time.Hour, Healthy: time.Hour}

// TestWakeCutsTheBackoffShort: a wake given while an attempt fails (the
// device came back meanwhile) ends the hour's backoff after it.
func TestWakeCutsTheBackoffShort(t *testing.T) {
	s, _ := New(slow)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failing := make(chan struct{})
	second := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		n := 0
		done <- s.Run(ctx, true, func(ctx context.Context) error {
			n++
			if n == 1 {
				close(failing)
				return errors.New("open eth1: no such device")
			}
			close(second)
			<-ctx.Done()
			return nil
		})
	}()
	<-failing
	s.Wake()
	select {
	case <-second:
	case <-time.After(10 * time.Second):
		t.Fatalf("Wake did not end the hour's backoff: %+v", s.Status())
	}
	if st := s.Status(); st.Restarts != 1 || !strings.Contains(st.LastError, "no such device") {
		t.Errorf("status %+v, want the woken attempt counted as a restart after the failure", st)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel = %v", err)
	}
}

// TestAWakeBeforeAnAttemptIsForgotten: a wake left over from before an
// attempt does not skip the backoff after that attempt fails.
func TestAWakeBeforeAnAttemptIsForgotten(t *testing.T) {
	s, _ := New(slow)
	s.Wake() // given before Run: no attempt, no backoff
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pending := make(chan int, 1)
	go s.Run(ctx, true, func(ctx context.Context) error {
		pending <- len(s.wake)
		<-ctx.Done()
		return nil
	})
	if n := <-pending; n != 0 {
		t.Errorf("%d wakes pending when the attempt started: a stale wake would skip the next backoff", n)
	}
}
