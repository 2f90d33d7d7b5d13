package sip

import (
	"bytes"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Registration table bounds. The table lives beside the dialogs, not in
// them: a phone refreshing on one Call-ID every minute fills its
// dialog's transaction bound in hours, and the refreshes that decide
// whether it is registered now are the newest ones.
const (
	// MaxRegistrations bounds the addresses of record kept; past it the
	// least recently seen is evicted and counted. A row holds at most
	// maxRegContacts contacts and maxRegCodes codes of bounded text, a
	// few KiB at worst: 1024 rows stay under 4 MiB.
	MaxRegistrations = 1024
	maxRegContacts   = 8  // contacts kept per grant; more are counted
	maxRegCodes      = 16 // distinct failure codes kept per row; more are counted
	maxRegOpen       = 4  // REGISTER transactions awaiting an answer per row
	maxRegText       = 256
	// RegisterTimeout is Timer F (64·T1, RFC 3261 §17.1.2.2): a REGISTER
	// with no final response this long after its last request, in
	// capture time, went unanswered.
	RegisterTimeout = 32 * time.Second
	// LapseGrace is how long past its expiry a binding is still taken as
	// held. Clients commonly refresh at the granted time itself, not
	// before (SIP_CALL_RTP_G711.pcap's Verso phone re-registers 0.25 s
	// after its 20 s ran out, and is answered 200), and registrars
	// remove bindings on a timer, not at the second; a refresh takes up
	// to RegisterTimeout, so that is the grace.
	LapseGrace = RegisterTimeout
)

// Registration states (Registration.State).
const (
	RegRegistered   = "registered"   // the last outcome granted a binding that has not expired
	RegLapsed       = "lapsed"       // the granted expiry (and LapseGrace) passed with no refresh seen
	RegUnregistered = "unregistered" // the last outcome removed every binding (Expires: 0)
	RegFailed       = "failed"       // the last outcome was a failure, a failed challenge or no answer
	RegPending      = "pending"      // REGISTERs seen, no outcome yet
)

// RegStates lists the states, for argument enums.
var RegStates = []string{RegRegistered, RegLapsed, RegUnregistered, RegFailed, RegPending}

// RegContact is one binding as the registrar granted it.
type RegContact struct {
	URI       string // sender text
	Expires   int    // seconds granted; -1 when the answer said none
	ExpiresAt time.Time
}

// CodeCount is a response code and how often it was the answer.
type CodeCount struct {
	Code int
	N    int
}

// regAttempt is one registration attempt awaiting its outcome: a
// REGISTER and, after a 401/407, its retry with credentials.
type regAttempt struct {
	callID       string
	src          netip.AddrPort
	start        time.Time // its first message
	last         time.Time // its last request or challenge
	challenged   bool
	unregister   bool
	reqExpires   int // the request's Expires header, -1 without one
	reqContacts  []RegContact
	reqWildcard  bool
	reqContactsN int
}

// Registration is what the capture showed of one address of record (the
// To URI of its REGISTERs, without parameters).
type Registration struct {
	AoR        string
	Registrar  netip.AddrPort // the last REGISTER's destination, or the address that answered
	RequestURI string         // the last REGISTER's Request-URI (sender text)
	Source     netip.AddrPort // the last REGISTER's source
	UserAgent  string         // the last REGISTER's User-Agent (sender text)
	FirstSeen  time.Time
	LastSeen   time.Time

	Requests      int // REGISTER requests, retransmissions apart
	Retransmits   int // retransmitted REGISTERs and responses
	Challenges401 int
	Challenges407 int
	// Successes are attempts answered 2xx that left a binding: a 401/407
	// then 200 is one success (and one ChallengedSuccess), no failure.
	Successes           int
	ChallengedSuccesses int
	Unregistrations     int // 2xx to an Expires: 0 (or Contact: *) REGISTER
	Failures            []CodeCount
	FailuresOther       int // failures with a code past maxRegCodes distinct ones
	// FailedChallenges are challenged attempts that then failed: a final
	// 3xx–6xx, or no final answer (counted in NoAnswer too).
	FailedChallenges int
	NoAnswer         int // attempts with no final answer within RegisterTimeout
	Lapses           int // grants that expired with no refresh seen
	Flaps            int // registered → failed or lapsed → registered again
	LastSuccess      time.Time
	LastFailure      time.Time
	LastFailureCode  int // 0 when the last failure was no answer

	Contacts     []RegContact // as granted by the last 2xx
	ContactsOver int          // contacts of that grant past maxRegContacts
	// ExpiresAt is the latest expiry of the last grant; zero when the
	// grant named none.
	ExpiresAt time.Time

	last    int8 // the last outcome: outcomeNone, outcomeSuccess…
	up      bool // a binding was granted and has not failed or lapsed since
	everUp  bool // up once since the last deliberate unregistration
	pending []regAttempt
}

const (
	outcomeNone int8 = iota
	outcomeSuccess
	outcomeFailure
	outcomeUnregistered
)

// regTable is the store's per-AoR table; the store's mutex guards it.
type regTable struct {
	rows    map[string]*Registration
	evicted uint64 // rows evicted for MaxRegistrations
	noAoR   uint64 // REGISTER messages whose To header held no URI
	latest  time.Time
}

// RegView is the table at one moment.
type RegView struct {
	Rows    []Registration // in no particular order
	Latest  time.Time      // the latest message time the store has seen
	Evicted uint64         // rows evicted at the MaxRegistrations bound
	NoAoR   uint64         // REGISTERs not kept: their To held no URI
}

// Registrations returns a copy of the registration table.
func (s *Store) Registrations() RegView {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := RegView{Rows: make([]Registration, 0, len(s.regs.rows)), Latest: s.regs.latest, Evicted: s.regs.evicted, NoAoR: s.regs.noAoR}
	for _, r := range s.regs.rows {
		c := *r
		c.Failures, c.Contacts = slices.Clone(r.Failures), slices.Clone(r.Contacts)
		c.pending = slices.Clone(r.pending)
		v.Rows = append(v.Rows, c)
	}
	return v
}

// observe folds one stored message into the table; the caller holds the
// store's mutex. method is the request's or the CSeq's method.
func (t *regTable) observe(meta Meta, m *Parsed, method string, retrans bool) {
	if meta.Time.After(t.latest) {
		t.latest = meta.Time
	}
	if method != "REGISTER" {
		return
	}
	aor := AoROf(m.Get(HTo))
	if aor == "" {
		t.noAoR++
		return
	}
	r := t.row(aor, meta.Time)
	now := meta.Time
	if now.After(r.LastSeen) {
		r.LastSeen = now
	}
	r.expire(now)
	if retrans {
		r.Retransmits++
		return
	}
	if m.Request {
		r.request(meta, m)
		return
	}
	r.response(meta, m)
}

// row returns aor's row, added (evicting the least recently seen when
// the table is full) if new.
func (t *regTable) row(aor string, now time.Time) *Registration {
	if r := t.rows[aor]; r != nil {
		return r
	}
	if t.rows == nil {
		t.rows = map[string]*Registration{}
	}
	if len(t.rows) >= MaxRegistrations {
		var oldest *Registration
		for _, r := range t.rows {
			if oldest == nil || r.LastSeen.Before(oldest.LastSeen) || r.LastSeen.Equal(oldest.LastSeen) && r.AoR < oldest.AoR {
				oldest = r
			}
		}
		delete(t.rows, oldest.AoR)
		t.evicted++
	}
	r := &Registration{AoR: aor, FirstSeen: now, LastSeen: now}
	t.rows[aor] = r
	return r
}

func (r *Registration) request(meta Meta, m *Parsed) {
	r.Requests++
	r.Registrar, r.Source = meta.Dst, meta.Src
	r.RequestURI = capText(m.RequestURI)
	if ua := m.Get(HUserAgent); len(ua) > 0 {
		r.UserAgent = capText(ua)
	}
	callID := string(m.Get(HCallID))
	a := r.attempt(callID)
	switch {
	case a != nil && !a.challenged:
		// The same Call-ID again without a challenge between: the
		// REGISTER before it was never answered.
		r.close(a, meta.Time)
		a = nil
	case a == nil:
		// A retry with credentials SHOULD keep the Call-ID (RFC 3261
		// §10.2); one that does not is still the challenged attempt's
		// retry when it comes from the same address within the timeout.
		for i := range r.pending {
			if p := &r.pending[i]; p.challenged && p.src == meta.Src {
				p.callID, a = callID, p
				break
			}
		}
	}
	if a == nil {
		if len(r.pending) >= maxRegOpen {
			r.close(&r.pending[0], meta.Time)
		}
		r.pending = append(r.pending, regAttempt{callID: callID, src: meta.Src, start: meta.Time})
		a = &r.pending[len(r.pending)-1]
	}
	a.last = meta.Time
	a.reqExpires = -1
	if e, ok := expiresHeader(m); ok {
		a.reqExpires = e
	}
	// Each contact asks for its expires parameter, else the Expires
	// header (RFC 3261 §10.2.1.1): an unregistration asks 0 for all.
	a.reqContacts, a.reqContactsN, a.reqWildcard = contactsOf(m, a.reqExpires, meta.Time)
	a.unregister = a.reqWildcard || len(a.reqContacts) > 0 &&
		!slices.ContainsFunc(a.reqContacts, func(c RegContact) bool { return c.Expires != 0 })
}

func (r *Registration) response(meta Meta, m *Parsed) {
	code := m.StatusCode
	if code < 200 {
		return
	}
	callID := string(m.Get(HCallID))
	a := r.attempt(callID)
	if a == nil {
		// Its request was not seen: a capture that began mid-transaction,
		// or a mirror of one direction only.
		if len(r.pending) >= maxRegOpen {
			r.close(&r.pending[0], meta.Time)
		}
		r.pending = append(r.pending, regAttempt{callID: callID, src: meta.Dst, start: meta.Time, reqExpires: -1})
		a = &r.pending[len(r.pending)-1]
		r.Registrar, r.Source = meta.Src, meta.Dst
	}
	t := meta.Time
	switch {
	case code == 401 || code == 407:
		if code == 401 {
			r.Challenges401++
		} else {
			r.Challenges407++
		}
		a.challenged, a.last = true, t
	case code < 300:
		r.granted(a, m, t)
		r.drop(a)
	default:
		r.failed(a.challenged, code, t)
		r.drop(a)
	}
}

// granted folds a 2xx: the bindings the registrar lists, each with the
// expiry it grants (the contact's expires parameter, else the answer's
// Expires header, else what the request asked for).
func (r *Registration) granted(a *regAttempt, m *Parsed, t time.Time) {
	exp := -1
	if e, ok := expiresHeader(m); ok {
		exp = e
	}
	if exp < 0 {
		exp = a.reqExpires
	}
	cs, n, _ := contactsOf(m, exp, t)
	if n == 0 && !a.unregister {
		// No Contact in the answer: the request's bindings, for what it
		// asked (RFC 3261 §10.3 says the 200 lists them; not every
		// registrar does).
		cs, n = slices.Clone(a.reqContacts), a.reqContactsN
		for i := range cs {
			if cs[i].Expires < 0 {
				cs[i].Expires = exp
			}
			cs[i].ExpiresAt = expiryAt(t, cs[i].Expires)
		}
	}
	cs = slices.DeleteFunc(cs, func(c RegContact) bool { return c.Expires == 0 })
	r.Contacts, r.ContactsOver = cs, max(n-maxRegContacts, 0)
	r.ExpiresAt = time.Time{}
	for _, c := range cs {
		if c.ExpiresAt.After(r.ExpiresAt) {
			r.ExpiresAt = c.ExpiresAt
		}
	}
	if a.unregister {
		r.Unregistrations++
		if len(cs) == 0 {
			// Deliberately gone: registering again later is no flap.
			r.last, r.up, r.everUp = outcomeUnregistered, false, false
			return
		}
	}
	if !a.unregister {
		r.Successes++
		if a.challenged {
			r.ChallengedSuccesses++
		}
	}
	if r.everUp && !r.up {
		r.Flaps++
	}
	r.LastSuccess, r.last, r.up, r.everUp = t, outcomeSuccess, true, true
}

func (r *Registration) failed(challenged bool, code int, t time.Time) {
	if challenged {
		r.FailedChallenges++
	}
	if code == 0 {
		r.NoAnswer++
	} else {
		i := slices.IndexFunc(r.Failures, func(c CodeCount) bool { return c.Code == code })
		switch {
		case i >= 0:
			r.Failures[i].N++
		case len(r.Failures) < maxRegCodes:
			r.Failures = append(r.Failures, CodeCount{code, 1})
		default:
			r.FailuresOther++
		}
	}
	r.LastFailure, r.LastFailureCode, r.last, r.up = t, code, outcomeFailure, false
}

// expire settles, at capture time now, what time alone decides: a
// grant that expired with no refresh (a lapse) and attempts left
// unanswered past RegisterTimeout, in the order they happened.
func (r *Registration) expire(now time.Time) {
	for {
		i := -1
		for j, a := range r.pending {
			if !a.last.Add(RegisterTimeout).After(now) && (i < 0 || a.last.Before(r.pending[i].last)) {
				i = j
			}
		}
		deadline := r.ExpiresAt.Add(LapseGrace)
		lapse := r.up && !r.ExpiresAt.IsZero() && !deadline.After(now) && !r.refreshing(deadline)
		if lapse && (i < 0 || !deadline.After(r.pending[i].last.Add(RegisterTimeout))) {
			r.Lapses++
			r.up = false
			continue
		}
		if i < 0 {
			return
		}
		r.close(&r.pending[i], now)
	}
}

// refreshing reports a refresh sent before deadline (the grant's
// expiry and its grace) still awaiting its answer: a 200 arriving after
// the deadline is no lapse, and if the refresh fails, that failure is
// what ends the binding.
func (r *Registration) refreshing(deadline time.Time) bool {
	for _, a := range r.pending {
		if !a.start.After(deadline) {
			return true
		}
	}
	return false
}

// close settles, at capture time now, an attempt that got no final
// answer: it failed when its timeout ran out, or now if that is sooner
// (a new REGISTER on its Call-ID replaced it).
func (r *Registration) close(a *regAttempt, now time.Time) {
	at := a.last.Add(RegisterTimeout)
	if now.Before(at) {
		at = now
	}
	r.failed(a.challenged, 0, at)
	r.drop(a)
}

func (r *Registration) attempt(callID string) *regAttempt {
	for i := range r.pending {
		if r.pending[i].callID == callID {
			return &r.pending[i]
		}
	}
	return nil
}

// drop removes a (a pointer into r.pending).
func (r *Registration) drop(a *regAttempt) {
	for i := range r.pending {
		if &r.pending[i] == a {
			r.pending = slices.Delete(r.pending, i, i+1)
			return
		}
	}
}

// At returns the row as it stands at capture time now: lapses and
// unanswered attempts that time alone settles are counted.
func (r Registration) At(now time.Time) Registration {
	r.Failures, r.pending = slices.Clone(r.Failures), slices.Clone(r.pending)
	r.expire(now)
	return r
}

// State is the row's state; call it on At's result.
func (r *Registration) State() string {
	switch r.last {
	case outcomeUnregistered:
		return RegUnregistered
	case outcomeFailure:
		return RegFailed
	case outcomeSuccess:
		if r.up {
			return RegRegistered
		}
		return RegLapsed
	}
	return RegPending
}

// Open is how many attempts still await an answer.
func (r *Registration) Open() int { return len(r.pending) }

// contactsOf reads every Contact of m (all Contact headers, each split
// at its commas): at most maxRegContacts kept, n counts them all, star
// reports "Contact: *". A contact's expiry is its expires parameter,
// else def.
func contactsOf(m *Parsed, def int, t time.Time) (cs []RegContact, n int, star bool) {
	for _, h := range m.Headers {
		if h.ID != HContact {
			continue
		}
		splitContacts(Unfold(h.Value), func(c []byte) bool {
			if bytes.Equal(c, []byte("*")) {
				star = true
				return true
			}
			n++
			if len(cs) >= maxRegContacts {
				return true
			}
			exp := def
			if e, ok := expiresValue(Param(c, "expires")); ok {
				exp = e
			}
			cs = append(cs, RegContact{URI: capText(URIOf(c)), Expires: exp, ExpiresAt: expiryAt(t, exp)})
			return true
		})
	}
	return cs, n, star
}

func expiryAt(t time.Time, secs int) time.Time {
	if secs < 0 {
		return time.Time{}
	}
	return t.Add(time.Duration(secs) * time.Second)
}

// AoROf returns the address of record of a To (or From) header value:
// its URI without URI parameters or headers, the scheme and host part
// lowercased (they are case-insensitive, the user part is not), at most
// 256 bytes. It is "" when the value holds no URI.
func AoROf(v []byte) string {
	uri := URIOf(v)
	colon := bytes.IndexByte(uri, ':')
	if colon <= 0 {
		return ""
	}
	at := bytes.IndexByte(uri, '@')
	hostFrom := colon + 1
	if at > colon {
		hostFrom = at + 1
	}
	end := len(uri)
	if i := bytes.IndexAny(uri[hostFrom:], ";?"); i >= 0 {
		end = hostFrom + i
	}
	if end <= colon+1 {
		return ""
	}
	s := strings.ToLower(string(uri[:colon+1])) + string(uri[colon+1:hostFrom]) + strings.ToLower(string(uri[hostFrom:end]))
	return capString(s)
}

// capText keeps at most maxRegText bytes of sender text.
func capText(b []byte) string { return capString(string(b[:min(len(b), maxRegText)])) }

func capString(s string) string { return s[:min(len(s), maxRegText)] }
