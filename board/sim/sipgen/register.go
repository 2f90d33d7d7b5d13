package sipgen

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"
)

// Registrations returns a fixed, deterministic capture of REGISTER
// traffic at a PBX (192.0.2.1, pbx.example.com) over 200 s (the last
// message 199.92 s after start),
// one address of record per case a registration monitor must tell apart:
//
//   - 1001 registers for 60 s, refreshes once at 50 s (the refresh sent
//     twice: a retransmission) and is never seen again: lapsed at 110 s
//     (142 s with the 32 s grace a monitor allows).
//   - 1002 is challenged (401), retries, and is refused 403 at 5 s; at
//     100 s it is challenged again and its retry is never answered: two
//     failed challenges, one of them no answer.
//   - 1003 is challenged (407) and registered at 10 s, refused 503 at
//     40 s, registered again at 45 s for 30 s (a flap), lapses at 75 s
//     (107 s with the grace),
//     registers again at 120 s for 120 s (a second flap): registered.
//   - 1004 registers for an hour at 20 s and unregisters (Expires: 0) at
//     150 s: unregistered.
//   - The PBX itself registers its trunk sip:4420790000@sip.provider.example
//     to 198.51.100.1 as "Asterisk PBX 20.5.0" at 0, 100 and 199.8 s, each
//     a 401 then a 200 granting 120 s in an Expires header: registered.
func Registrations(start time.Time) ([]Packet, error) {
	g := &regGen{start: start}
	pbx := g.host(net.IPv4(192, 0, 2, 1), "")
	provider := g.host(net.IPv4(198, 51, 100, 1), "")
	provider.mac, provider.ttl = macAddr(routerOctet+1), remoteTTL
	phone := func(octet byte, user string) *regUA {
		h := g.host(net.IPv4(192, 0, 2, octet), "fieldtap-sipgen desk/1.0")
		return &regUA{g: g, ua: endpoint{h, sipPort}, reg: endpoint{pbx, sipPort}, aor: "sip:" + user + "@pbx.example.com",
			domain: "pbx.example.com", contact: fmt.Sprintf("sip:%s@%s:%d", user, h.ip, sipPort), agent: h.agent, server: "fieldtap-sipgen pbx/1.0"}
	}

	lapse := phone(10, "1001")
	lapse.register(0, 60, 0, 200, 60)
	req := lapse.request(50, 60, false)
	lapse.resend(50.5, req)
	lapse.answer(50.6, req, 200, 60)

	fail := phone(11, "1002")
	fail.register(5, 60, 401, 403, 0)
	fail.register(100, 60, 401, 0, 0) // the retry is never answered

	flap := phone(12, "1003")
	flap.register(10, 60, 407, 200, 60)
	flap.register(40, 60, 0, 503, 0)
	flap.register(45, 30, 0, 200, 30)
	flap.register(120, 120, 0, 200, 120)

	unreg := phone(13, "1004")
	unreg.register(20, 3600, 0, 200, 3600)
	unreg.register(150, 0, 0, 200, 0)

	pbx.agent = "Asterisk PBX 20.5.0"
	trunk := &regUA{g: g, ua: endpoint{pbx, sipPort}, reg: endpoint{provider, sipPort}, aor: "sip:4420790000@sip.provider.example",
		domain: "sip.provider.example", contact: "sip:4420790000@192.0.2.1:5060", agent: pbx.agent, server: "fieldtap-sipgen provider/1.0", expiresHeader: true}
	for _, at := range []float64{0, 100, 200 - 0.2} {
		trunk.register(at, 120, 401, 200, 120)
	}

	slices.SortStableFunc(g.out, func(a, b Packet) int { return a.Time.Compare(b.Time) })
	return g.out, g.err
}

// WriteRegistrationsPcapng writes Registrations(start) to w as pcapng.
func WriteRegistrationsPcapng(w io.Writer, start time.Time) error {
	pkts, err := Registrations(start)
	if err != nil {
		return err
	}
	ng, err := newNgWriter(w)
	if err != nil {
		return err
	}
	for _, p := range pkts {
		if err := ng.packet(p); err != nil {
			return err
		}
	}
	return ng.flush()
}

type regGen struct {
	start time.Time
	out   []Packet
	n     int // messages built: branches, tags and Call-IDs are numbered
	err   error
}

func (g *regGen) host(ip net.IP, agent string) *host {
	ip = ip.To4()
	return &host{ip: ip, mac: macAddr(ip[3]), ttl: localTTL, agent: agent, ipID: uint16(ip[3]) << 8}
}

func (g *regGen) emit(at float64, d datagram) {
	if g.err != nil {
		return
	}
	b, err := frame(d)
	g.err = err
	g.out = append(g.out, Packet{Time: g.start.Add(time.Duration(at * float64(time.Second))), Data: b})
}

// regUA is one registering user agent and its registrar.
type regUA struct {
	g               *regGen
	ua, reg         endpoint
	aor, domain     string
	contact         string
	agent, server   string
	expiresHeader   bool // grants in an Expires header, not a contact parameter
	callID, fromTag string
	cseq            int
}

// regReq is one REGISTER as sent, so its answers can echo it.
type regReq struct {
	text, via, from, cseq string
}

// register runs one registration: a REGISTER asking expires seconds,
// a challenge (401 or 407, 0 for none) and the retry with credentials,
// then the final answer (0: none) granting grant seconds.
func (u *regUA) register(at float64, expires, challenge, final, grant int) {
	req := u.request(at, expires, false)
	if challenge != 0 {
		u.answer(at+0.02, req, challenge, 0)
		at += 0.1
		req = u.request(at, expires, true)
	}
	if final != 0 {
		u.answer(at+0.02, req, final, grant)
	}
}

func (u *regUA) request(at float64, expires int, creds bool) regReq {
	g := u.g
	g.n++
	if u.callID == "" {
		u.callID = fmt.Sprintf("reg%04d@%s", g.n, u.ua.h.ip)
		u.fromTag = fmt.Sprintf("t%04d", g.n)
	}
	u.cseq++
	r := regReq{
		via:  fmt.Sprintf("SIP/2.0/UDP %s:%d;branch=%s%06d", u.ua.h.ip, u.ua.port, branchCookie, g.n),
		from: fmt.Sprintf("<%s>;tag=%s", u.aor, u.fromTag),
		cseq: fmt.Sprintf("%d REGISTER", u.cseq),
	}
	var b strings.Builder
	fmt.Fprintf(&b, "REGISTER sip:%s SIP/2.0\r\nVia: %s\r\nMax-Forwards: 70\r\nFrom: %s\r\nTo: <%s>\r\nCall-ID: %s\r\nCSeq: %s\r\n",
		u.domain, r.via, r.from, u.aor, u.callID, r.cseq)
	fmt.Fprintf(&b, "Contact: <%s>\r\nExpires: %d\r\n", u.contact, expires)
	if creds {
		user := strings.TrimPrefix(strings.SplitN(u.aor, "@", 2)[0], "sip:")
		fmt.Fprintf(&b, "Authorization: Digest username=\"%s\", realm=\"%s\", nonce=\"n%04d\", uri=\"sip:%s\", response=\"00000000000000000000000000000000\"\r\n",
			user, u.domain, g.n, u.domain)
	}
	fmt.Fprintf(&b, "User-Agent: %s\r\nContent-Length: 0\r\n\r\n", u.agent)
	r.text = b.String()
	u.resend(at, r)
	return r
}

// resend sends req (again, when it was sent before: a retransmission).
func (u *regUA) resend(at float64, req regReq) {
	u.g.emit(at, datagram{src: u.ua, dst: u.reg, payload: []byte(req.text)})
}

// answer sends a response to req; a 2xx lists the contact with grant
// seconds (none when grant is 0, as an unregistration's answer has).
func (u *regUA) answer(at float64, req regReq, code, grant int) {
	ok := code < 300
	reasons := map[int]string{200: "OK", 401: "Unauthorized", 403: "Forbidden", 407: "Proxy Authentication Required", 503: "Service Unavailable"}
	var b strings.Builder
	fmt.Fprintf(&b, "SIP/2.0 %d %s\r\nVia: %s\r\nFrom: %s\r\nTo: <%s>;tag=r%s\r\nCall-ID: %s\r\nCSeq: %s\r\n",
		code, reasons[code], req.via, req.from, u.aor, u.fromTag, u.callID, req.cseq)
	switch {
	case code == 401:
		fmt.Fprintf(&b, "WWW-Authenticate: Digest realm=\"%s\", nonce=\"n%04d\", algorithm=MD5\r\n", u.domain, u.g.n)
	case code == 407:
		fmt.Fprintf(&b, "Proxy-Authenticate: Digest realm=\"%s\", nonce=\"n%04d\", algorithm=MD5\r\n", u.domain, u.g.n)
	case ok && grant > 0 && u.expiresHeader:
		fmt.Fprintf(&b, "Contact: <%s>\r\nExpires: %d\r\n", u.contact, grant)
	case ok && grant > 0:
		fmt.Fprintf(&b, "Contact: <%s>;expires=%d\r\n", u.contact, grant)
	}
	fmt.Fprintf(&b, "Server: %s\r\nContent-Length: 0\r\n\r\n", u.server)
	u.g.emit(at, datagram{src: u.reg, dst: u.ua, payload: []byte(b.String())})
}
