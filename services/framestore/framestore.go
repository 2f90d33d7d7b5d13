// Package framestore keeps the most recent raw frames of one port in a
// bounded ring, for export and for analysers that look back.
package framestore

import (
	"time"

	"github.com/gopacket/gopacket/layers"

	"fieldtap/services/ring"
)

// recordOverhead approximates a Record's memory beyond its data so the
// byte limit tracks real memory, not payload only.
const recordOverhead = 48

// Record is one stored frame.
type Record struct {
	Time    time.Time
	Link    layers.LinkType
	Data    []byte
	OrigLen int
}

// Store is one port's frame ring.
type Store struct {
	*ring.Ring[Record]
}

// New returns a store bounded by l.
func New(l ring.Limits) (*Store, error) {
	r, err := ring.New(l, func(r Record) int { return len(r.Data) + recordOverhead })
	if err != nil {
		return nil, err
	}
	return &Store{r}, nil
}
