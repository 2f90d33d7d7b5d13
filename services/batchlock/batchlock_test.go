package batchlock

import (
	"sync"
	"testing"
	"time"
)

// A feeder that holds the lock takes it no more per call, and a reader
// waits until the batch ends, then sees every update of it.
func TestHoldCoversTheBatch(t *testing.T) {
	var m Mutex
	n := 0
	m.Hold()
	read := make(chan int)
	go func() {
		m.Lock()
		defer m.Unlock()
		read <- n
	}()
	for range 100 {
		m.FeedLock() // would deadlock if it locked again
		n++
		m.FeedUnlock()
	}
	select {
	case got := <-read:
		t.Fatalf("a reader got in during the batch and saw %d", got)
	case <-time.After(20 * time.Millisecond):
	}
	m.Release()
	if got := <-read; got != 100 {
		t.Fatalf("reader saw %d after the batch, want 100", got)
	}
}

// Outside a batch FeedLock excludes readers as Lock does.
func TestFeedLockWithoutHold(t *testing.T) {
	var m Mutex
	var wg sync.WaitGroup
	n := 0
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				m.Lock()
				_ = n
				m.Unlock()
			}
		})
	}
	for range 1000 {
		m.FeedLock()
		n++
		m.FeedUnlock()
	}
	wg.Wait()
	if n != 1000 {
		t.Fatalf("n = %d", n)
	}
}
