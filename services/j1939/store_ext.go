package j1939

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
