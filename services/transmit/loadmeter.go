package transmit

import (
	"sync"
	"time"
)

// Load meter bounds. J1708 ports have no per-port store that measures
// load (the J1587 store merges ports), so the daemon feeds one LoadMeter
// per J1708 port from the frames the port itself receives.
const (
	// loadBucket is the meter's resolution.
	loadBucket = 100 * time.Millisecond
	// LoadFresh is how recent the last frame must be for a load to count
	// as measured: older means the port is quiet or stopped, and the load
	// is unknown (null with a reason), not 0.
	LoadFresh = 2 * time.Second
	// loadBuckets covers LoadFresh, which is longer than loadWindow.
	loadBuckets = int(LoadFresh / loadBucket)
	// J1708BitsPerByte is one UART character on J1708 (8N1: start, 8
	// data, stop).
	J1708BitsPerByte = j1708BitsPerByte
)

// LoadMeter measures a port's bus load over the last second from the bits
// of the frames it receives. It holds loadBuckets counters, nothing more.
type LoadMeter struct {
	bitrate int
	mu      sync.Mutex
	slot    [loadBuckets]int64 // bucket index (time / loadBucket) each counter is for
	bits    [loadBuckets]int
	last    time.Time
}

// NewLoadMeter returns a meter for a bus of bitrate bit/s (J1708: 9600).
func NewLoadMeter(bitrate int) *LoadMeter { return &LoadMeter{bitrate: bitrate} }

// Add counts a frame of bits bits that ended at t.
func (m *LoadMeter) Add(t time.Time, bits int) {
	k := t.UnixNano() / int64(loadBucket)
	// Euclidean: a time before 1970 (a capture file's) has k < 0.
	i := int((k%int64(loadBuckets) + int64(loadBuckets)) % int64(loadBuckets))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.slot[i] != k {
		m.slot[i], m.bits[i] = k, 0
	}
	m.bits[i] += bits
	if t.After(m.last) {
		m.last = t
	}
}

// Load is the fraction of the last whole second the bus was busy (the
// loadWindow of complete buckets before the current one, so it lags by
// less than loadBucket), and whether it is known: a frame within
// LoadFresh of now, on a bus of known bitrate.
func (m *LoadMeter) Load(now time.Time) (float64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bitrate <= 0 || m.last.IsZero() || now.Sub(m.last) > LoadFresh {
		return 0, false
	}
	cur := now.UnixNano() / int64(loadBucket)
	from := cur - int64(loadWindow/loadBucket)
	bits := 0
	for i := range m.slot {
		if m.slot[i] >= from && m.slot[i] < cur {
			bits += m.bits[i]
		}
	}
	return float64(bits) / (float64(m.bitrate) * loadWindow.Seconds()), true
}

// J1708Bitrate is the J1708 bus rate, for NewLoadMeter.
const J1708Bitrate = j1708Bitrate
