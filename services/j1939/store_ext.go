package j1939

import (
	"maps"
	"slices"
)

// SetCatalogue makes c the catalogue the store decodes SPNs with from now
// on (samples, latest values); nil restores the built-in table. Samples
// already kept stay as they were decoded.
func (s *Store) SetCatalogue(c *Catalogue) { s.cat.Store(c) }

// Catalogue is the catalogue the store decodes with.
func (s *Store) Catalogue() *Catalogue {
	if c := s.cat.Load(); c != nil {
		return c
	}
	return builtinCatalogue
}

// NameOf returns a look-up of the NAMEs last claimed on port, for the
// window views whose window holds no claim of an address.
func (s *Store) NameOf(port string) func(sa uint8) *Name {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names [256]*Name
	if p := s.ports[port]; p != nil {
		for sa, e := range p.ecus {
			if e != nil && e.Claim != nil {
				n := *e.Claim
				names[sa] = &n
			}
		}
	}
	return func(sa uint8) *Name { return names[sa] }
}

// SeenPGNs lists every PGN counted on any port, in ascending order. It
// holds at most MaxPorts × MaxPGNs values (a port's table stops at
// MaxPGNs; its overflow is counted in PortSummary.PGNOverflow).
func (s *Store) SeenPGNs() []uint32 {
	s.mu.Lock()
	set := map[uint32]struct{}{}
	for _, p := range s.ports {
		for pgn := range p.pgns {
			set[pgn] = struct{}{}
		}
	}
	s.mu.Unlock()
	return slices.Sorted(maps.Keys(set))
}
