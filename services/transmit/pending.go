package transmit

// PendingConfirmations is how many questions wait for a person's answer
// now (expired ones not counted), for the status page.
func (s *Service) PendingConfirmations() int {
	now := s.o.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, q := range s.pending {
		if now.Before(q.expires) {
			n++
		}
	}
	return n
}
