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

// MaxSources bounds the definition sources the samples name (a
// registry keeps 8 databases; each load under a new name is a source):
// beyond it, the last index stands for every later DBC source.
const MaxSources = 256

// overflowSource names the samples of every DBC source past MaxSources-1.
const overflowSource = sourceDBC + "(one of several loaded later)"

// sourceIndex is src's index in s.sources, added when new; the caller
// holds mu.
func (s *Store) sourceIndex(src string) uint8 {
	if len(s.sources) == 0 {
		s.sources = append(s.sources, SourceBuiltin)
	}
	if i := slices.Index(s.sources, src); i >= 0 {
		return uint8(i)
	}
	if len(s.sources) == MaxSources-1 {
		s.sources = append(s.sources, overflowSource)
	}
	if len(s.sources) == MaxSources {
		return MaxSources - 1
	}
	s.sources = append(s.sources, src)
	return uint8(len(s.sources) - 1)
}

// Sources names the definitions samples were decoded with, by index
// (Sample.Source): read it after the samples.
func (s *Store) Sources() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sources)
}

// Source is the definition that decoded the sample ("builtin" or
// "dbc:<database>"), from sources as Store.Sources returned them after
// the sample was read.
func (v Sample) Source(sources []string) string {
	if int(v.src) < len(sources) {
		return sources[v.src]
	}
	return SourceBuiltin
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
