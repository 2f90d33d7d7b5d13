package tlsdecrypt

import "net/netip"

// Stats count flows and records by what became of them.
type Stats struct {
	Flows       uint64 // connections whose ClientHello was seen
	Decrypted   uint64 // flows with a record decrypted
	NoKeys      uint64 // flows whose client random no key log holds
	Unsupported uint64 // flows of a version or suite not read (CBC, TLS 1.1, …)
	NoHello     uint64 // directions joined after the hellos: nothing to key them
	Failed      uint64 // directions given up after records failed to authenticate
	Lost        uint64 // directions that lost bytes: the sequence number is unknown
	Evicted     uint64 // flows dropped at the table's cap, oldest first
	Overflow    uint64 // directions whose clear bytes passed the buffer cap
	Records     uint64 // records decrypted
	BadRecords  uint64 // byte streams that stopped being TLS records
}

// Limits bound the flow table.
type Limits struct {
	MaxFlows int // connections followed at once
	// MaxBuffer bounds one direction's decrypted bytes awaiting framing.
	MaxBuffer int
}

// Defaults for Limits. A direction's buffer holds a SIP message being
// framed (at most 64 KiB, sip.MaxMessage) and the record that completes
// it (at most 16 KiB and its padding).
const (
	DefaultMaxFlows  = 1024
	DefaultMaxBuffer = 96 << 10
)

// maxFailures is how many records in a row may fail to authenticate
// before a direction is given up (wrong keys, or a stream we misread).
const maxFailures = 8

// Flows follows TLS connections, one entry per connection, keyed by its
// two ends. It is used from one goroutine (the analyser's).
type Flows struct {
	keys *Keys
	lim  Limits
	m    map[connKey]*flow
	seq  uint64
	st   Stats
}

type connKey struct{ a, b netip.AddrPort }

func keyOf(src, dst netip.AddrPort) connKey {
	if src.Compare(dst) > 0 {
		src, dst = dst, src
	}
	return connKey{src, dst}
}

// flow is one connection: what its hellos said and each direction.
type flow struct {
	client       netip.AddrPort // the end that sent the ClientHello
	clientRandom [32]byte
	serverRandom [32]byte
	haveClient   bool
	haveServer   bool
	suite        uint16
	tls13        bool
	used         uint64 // last use, for eviction
	counted      bool   // Decrypted, NoKeys or Unsupported counted once
	sec          *secrets
	half         [2]Half // the direction that spoke first, then the other
}

// NewFlows returns a flow table reading secrets from keys.
func NewFlows(keys *Keys, lim Limits) *Flows {
	if lim.MaxFlows <= 0 {
		lim.MaxFlows = DefaultMaxFlows
	}
	if lim.MaxBuffer <= 0 {
		lim.MaxBuffer = DefaultMaxBuffer
	}
	return &Flows{keys: keys, lim: lim, m: map[connKey]*flow{}}
}

// Stats returns the table's counters; only the goroutine using the
// table may call it.
func (fs *Flows) Stats() Stats { return fs.st }

// KeyStats returns the key store's counters; any goroutine may call it.
func (fs *Flows) KeyStats() KeyStats { return fs.keys.Stats() }

// Open returns the half of the connection src→dst, making the
// connection's entry if needed; a full table drops its least recently
// used connection.
func (fs *Flows) Open(src, dst netip.AddrPort) *Half {
	k := keyOf(src, dst)
	f := fs.m[k]
	if f == nil {
		if len(fs.m) >= fs.lim.MaxFlows {
			var oldK connKey
			var old *flow
			for k, f := range fs.m {
				if old == nil || f.used < old.used {
					oldK, old = k, f
				}
			}
			delete(fs.m, oldK)
			for i := range old.half {
				old.half[i].stop(Stopped)
				old.half[i].state = stateGone
			}
			fs.st.Evicted++
		}
		f = &flow{}
		f.half[0] = Half{fs: fs, f: f}
		f.half[1] = Half{fs: fs, f: f}
		fs.m[k] = f
	}
	f.touch()
	// Directions take a half each in the order they first speak (the
	// key holds just the two ends); the ClientHello then says which end
	// is the client.
	h := &f.half[0]
	if h.opened && h.src != src {
		h = &f.half[1]
	}
	h.opened, h.src = true, src
	return h
}

// touch marks the flow used now, for eviction.
func (f *flow) touch() {
	fs := f.half[0].fs
	fs.seq++
	f.used = fs.seq
}

type halfState int

const (
	stateClear     halfState = iota // hellos and other plaintext records
	stateEncrypted                  // records protected by keys
	stateDone                       // nothing more to read: counted why
	stateGone                       // the flow was evicted
)

// Half is one direction of a connection.
type Half struct {
	fs     *Flows
	f      *flow
	src    netip.AddrPort
	opened bool
	state  halfState
	why    Result // once stateDone
	hs     *keys  // TLS 1.3 handshake epoch, nil once past it
	app    *keys  // TLS 1.3 application epoch, or TLS 1.2's keys
	fails  int
	out    []byte // decrypted application data not yet consumed
	nonce  []byte
	plain  []byte
	scan   hsScanner
}

// Result says whether a direction can be read.
type Result int

// Results of Read.
const (
	Reading     Result = iota // records consumed (decrypted or plaintext)
	NoKeys                    // the session's keys are not known
	Unsupported               // a version or suite not read
	Stopped                   // cannot be read further: bytes lost, records failing, evicted, joined late or not TLS
)

// Read consumes the whole records at the start of b, appending their
// decrypted application data to Pending. It returns how many bytes it
// consumed and whether the direction can still be read; once it says
// anything but Reading, it consumes all it is given.
func (h *Half) Read(b []byte) (int, Result) {
	done := 0
	for done < len(b) {
		if h.state >= stateDone {
			return len(b), h.result()
		}
		h.f.touch()
		rec, n, err := ParseRecord(b[done:])
		if err != nil {
			h.fs.st.BadRecords++
			h.stop(Stopped)
			return len(b), Stopped
		}
		if n == 0 {
			break
		}
		h.record(rec)
		done += n
	}
	return done, h.result()
}

// Pending is the decrypted application data not yet consumed.
func (h *Half) Pending() []byte { return h.out }

// Consume drops the first n bytes of Pending.
func (h *Half) Consume(n int) { h.out = h.out[:copy(h.out, h.out[n:])] }

// Lost says bytes of this direction were lost: its record sequence
// numbers, and so its nonces, are unknown from here.
func (h *Half) Lost() {
	if h.state < stateDone {
		h.fs.st.Lost++
		h.stop(Stopped)
	}
}

func (h *Half) result() Result {
	switch h.state {
	case stateDone:
		return h.why
	case stateGone:
		return Stopped
	}
	return Reading
}

func (h *Half) stop(why Result) {
	h.state, h.why, h.out = stateDone, why, nil
	h.hs, h.app = nil, nil
}

func (h *Half) fromServer() bool { return h.f.haveClient && h.src != h.f.client }

// record acts on one record of the direction.
func (h *Half) record(r Record) {
	f := h.f
	if h.state == stateEncrypted {
		if r.Type == typeChangeCipherSpec && f.tls13 {
			return // TLS 1.3's middlebox-compatibility CCS is not protected
		}
		h.decrypt(r)
		return
	}
	switch r.Type {
	case typeHandshake:
		hl, err := parseHello(r.Body)
		if err != nil {
			return // another plaintext handshake message (TLS 1.2's Certificate, …)
		}
		switch {
		case hl.typ == hsClientHello && (!f.haveClient || f.client == h.src):
			if !f.haveClient {
				h.fs.st.Flows++
			}
			f.haveClient, f.client, f.clientRandom = true, h.src, hl.random
		case hl.typ == hsServerHello && f.haveClient && h.fromServer() && hl.random != helloRetry:
			f.haveServer, f.serverRandom, f.suite, f.tls13 = true, hl.random, hl.suite, hl.tls13
			if f.tls13 { // all the server sends after its hello is protected
				h.encrypt()
			}
		}
	case typeChangeCipherSpec:
		if f.haveServer && !f.tls13 {
			h.encrypt() // TLS 1.2: the records after it are protected
		}
	case typeApplicationData:
		if f.haveServer && f.tls13 { // the client's first protected record
			h.encrypt()
			if h.state == stateEncrypted {
				h.decrypt(r)
			}
			return
		}
		h.fs.st.NoHello++ // joined the connection after its hellos
		h.stop(Stopped)
	}
}

// encrypt keys the direction from the key store, or stops it saying why.
func (h *Half) encrypt() {
	f := h.f
	if !f.haveServer {
		h.fs.st.NoHello++
		h.stop(Stopped)
		return
	}
	var s suite
	var ok bool
	if f.tls13 {
		s, ok = tls13Suites[f.suite]
	} else {
		s, ok = tls12Suites[f.suite]
	}
	if !ok {
		h.once(&h.fs.st.Unsupported)
		h.stop(Unsupported)
		return
	}
	if f.sec == nil {
		if sec, found := h.fs.keys.lookup(f.clientRandom); found {
			f.sec = &sec
		}
	}
	var err error
	switch sec := f.sec; {
	case sec == nil:
	case f.tls13:
		hs, app := sec.chs, sec.cts0
		if h.fromServer() {
			hs, app = sec.shs, sec.sts0
		}
		if hs != nil && err == nil {
			h.hs, err = tls13Keys(s, hs)
		}
		if app != nil && err == nil {
			h.app, err = tls13Keys(s, app)
		}
	case sec.master != nil:
		var c, sv *keys
		c, sv, err = tls12Keys(s, sec.master, f.clientRandom, f.serverRandom)
		h.app = c
		if h.fromServer() {
			h.app = sv
		}
	}
	if err != nil || (h.hs == nil && h.app == nil) {
		h.once(&h.fs.st.NoKeys)
		h.stop(NoKeys)
		return
	}
	h.state = stateEncrypted
}

// once counts a flow's outcome once, whichever direction comes to it.
func (h *Half) once(c *uint64) {
	if !h.f.counted {
		h.f.counted = true
		*c++
	}
}

// decrypt opens a protected record and acts on its content.
func (h *Half) decrypt(r Record) {
	f := h.f
	if !f.tls13 {
		plain, ok := h.open12(r)
		if !ok {
			h.fail()
			return
		}
		h.opened1()
		if r.Type == typeApplicationData {
			h.deliver(plain)
		}
		return
	}
	if r.Type != typeApplicationData {
		return // a plaintext alert
	}
	if h.hs != nil {
		if plain, typ, ok := h.open13(h.hs, r); ok {
			h.opened1()
			h.inner(plain, typ)
			return
		}
	}
	// Past the handshake epoch (its Finished unseen, or its secret not
	// logged): the application keys start at sequence 0.
	if h.app != nil {
		if plain, typ, ok := h.open13(h.app, r); ok {
			h.hs = nil
			h.opened1()
			h.inner(plain, typ)
			return
		}
	}
	h.fail()
}

func (h *Half) opened1() {
	h.fails = 0
	h.fs.st.Records++
	h.once(&h.fs.st.Decrypted)
}

func (h *Half) fail() {
	h.fails++
	if h.fails >= maxFailures {
		h.fs.st.Failed++
		h.stop(Stopped)
	}
}

// open13 opens a TLS 1.3 record: the header is the additional data, the
// nonce the IV XOR the sequence number; the content type is the last
// non-zero byte of the plaintext, after which come zeros of padding.
func (h *Half) open13(k *keys, r Record) (plain []byte, typ uint8, ok bool) {
	h.nonce = seqNonce(h.nonce, k.iv, k.seq)
	p, err := k.aead.Open(h.plain[:0], h.nonce, r.Body, r.Header)
	if err != nil {
		return nil, 0, false
	}
	h.plain = p
	k.seq++
	i := len(p) - 1
	for i >= 0 && p[i] == 0 {
		i--
	}
	if i < 0 {
		return nil, 0, true // all padding: nothing to act on
	}
	return p[:i], p[i], true
}

// open12 opens a TLS 1.2 AEAD record: AES-GCM's nonce is the 4-byte salt
// and the record's 8 explicit bytes, ChaCha20's the IV XOR the sequence
// number; the additional data is seq, type, version and plaintext length.
func (h *Half) open12(r Record) ([]byte, bool) {
	k := h.app
	body := r.Body
	if k.aead.NonceSize() == 12 && len(k.iv) == 4 {
		if len(body) < 8 {
			return nil, false
		}
		h.nonce = append(append(h.nonce[:0], k.iv...), body[:8]...)
		body = body[8:]
	} else {
		h.nonce = seqNonce(h.nonce, k.iv, k.seq)
	}
	n := len(body) - k.aead.Overhead()
	if n < 0 {
		return nil, false
	}
	var ad [13]byte
	for i := range 8 {
		ad[i] = byte(k.seq >> (56 - 8*i))
	}
	ad[8], ad[9], ad[10], ad[11], ad[12] = r.Type, byte(r.Version>>8), byte(r.Version), byte(n>>8), byte(n)
	p, err := k.aead.Open(h.plain[:0], h.nonce, body, ad[:])
	if err != nil {
		return nil, false
	}
	h.plain = p
	k.seq++
	return p, true
}

// inner acts on a TLS 1.3 record's content.
func (h *Half) inner(plain []byte, typ uint8) {
	switch typ {
	case typeApplicationData:
		h.hs = nil // application data comes after the Finished
		h.deliver(plain)
	case typeHandshake:
		h.scan.feed(plain, func(msg uint8) {
			switch {
			case msg == hsFinished && h.hs != nil:
				h.hs = nil // the next record is under the application keys
			case msg == hsKeyUpdate && h.hs == nil && h.app != nil:
				h.keyUpdate()
			}
		})
	}
}

// keyUpdate moves the application epoch to the next traffic secret
// (RFC 8446 §7.2) after a KeyUpdate message.
func (h *Half) keyUpdate() {
	s := tls13Suites[h.f.suite]
	next, err := expandLabel(s.hash, h.app.secret, "traffic upd", s.hash().Size())
	if err == nil {
		var k *keys
		if k, err = tls13Keys(s, next); err == nil {
			h.app = k
			return
		}
	}
	h.fs.st.Failed++
	h.stop(Stopped)
}

func (h *Half) deliver(p []byte) {
	if len(h.out)+len(p) > h.fs.lim.MaxBuffer {
		h.fs.st.Overflow++
		h.stop(Stopped)
		return
	}
	h.out = append(h.out, p...)
}

// hsScanner finds the handshake messages in a direction's decrypted
// handshake bytes, whose messages may span records.
type hsScanner struct {
	hdr  [4]byte
	nhdr int
	skip int // body bytes of the current message still to come
}

func (s *hsScanner) feed(b []byte, fn func(msg uint8)) {
	for len(b) > 0 {
		if s.skip > 0 {
			n := min(s.skip, len(b))
			s.skip -= n
			b = b[n:]
			continue
		}
		n := copy(s.hdr[s.nhdr:], b)
		s.nhdr += n
		b = b[n:]
		if s.nhdr < 4 {
			return
		}
		s.nhdr = 0
		s.skip = int(s.hdr[1])<<16 | int(s.hdr[2])<<8 | int(s.hdr[3])
		fn(s.hdr[0])
	}
}
