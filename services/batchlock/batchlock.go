package batchlock

import "sync"

// Mutex guards the feeder's state. The zero value is unlocked.
type Mutex struct {
	mu sync.Mutex
	// held is read and written only on the feeder's goroutine (Hold,
	// Release, FeedLock, FeedUnlock), so it needs no synchronisation.
	held bool
}

// Lock locks m for a reader (or a feeder that does not hold it).
func (m *Mutex) Lock() { m.mu.Lock() }

// Unlock unlocks what Lock locked.
func (m *Mutex) Unlock() { m.mu.Unlock() }

// Hold locks m on the feeder's goroutine until Release; FeedLock and
// FeedUnlock do nothing meanwhile.
func (m *Mutex) Hold() {
	m.mu.Lock()
	m.held = true
}

// Release ends Hold.
func (m *Mutex) Release() {
	m.held = false
	m.mu.Unlock()
}

// FeedLock locks m for one call on the feeder's goroutine, unless the
// feeder holds it already. Only the feeder may call it.
func (m *Mutex) FeedLock() {
	if !m.held {
		m.mu.Lock()
	}
}

// FeedUnlock undoes FeedLock.
func (m *Mutex) FeedUnlock() {
	if !m.held {
		m.mu.Unlock()
	}
}
