package recorder

// abandon drops the recorder as a kill would: no flush, no sync, no
// index, the lock released by closing its file.
func (r *Recorder) abandon() {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if r.seg != nil {
		r.seg.f.Close()
		r.seg = nil
	}
	r.mu.Lock()
	r.shut = true
	r.mu.Unlock()
	r.lock.Close()
}
