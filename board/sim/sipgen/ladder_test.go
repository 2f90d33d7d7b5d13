package sipgen

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// ladders are the message sequences a call may show, by outcome.
var ladders = map[string][]string{
	"answered":  {"INVITE", "100", "180", "200", "ACK", "BYE", "200"},
	"busy":      {"INVITE", "100", "486", "ACK"},
	"notFound":  {"INVITE", "100", "404", "ACK"},
	"cancelled": {"INVITE", "100", "180", "CANCEL", "200", "487", "ACK"},
}

// sipMessage is one decoded SIP packet.
type sipMessage struct {
	label string // method or status code
	sip   *layers.SIP
	body  []byte
}

// sipCalls groups the SIP messages of ps by Call-ID, in capture order.
func sipCalls(t *testing.T, ps []Packet) (map[string][]sipMessage, []string) {
	t.Helper()
	calls := map[string][]sipMessage{}
	var order []string
	for i, p := range ps {
		pkt := gopacket.NewPacket(p.Data, layers.LayerTypeEthernet, gopacket.Default)
		s, _ := pkt.Layer(layers.LayerTypeSIP).(*layers.SIP)
		if s == nil {
			continue
		}
		udp := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		head, body, ok := bytes.Cut(udp.Payload, []byte("\r\n\r\n"))
		if !ok {
			t.Fatalf("packet %d: SIP without an empty line after the headers", i)
		}
		if cl := s.GetContentLength(); int(cl) != len(body) {
			t.Fatalf("packet %d: Content-Length %d, body %d bytes:\n%s", i, cl, len(body), head)
		}
		label := s.Method.String()
		if s.IsResponse {
			label = strconv.Itoa(s.ResponseCode)
		}
		id := s.GetCallID()
		if _, seen := calls[id]; !seen {
			order = append(order, id)
		}
		calls[id] = append(calls[id], sipMessage{label: label, sip: s, body: body})
	}
	return calls, order
}

func labels(ms []sipMessage) []string {
	var l []string
	for _, m := range ms {
		l = append(l, m.label)
	}
	return l
}

func outcomeOf(ms []sipMessage) string {
	for name, want := range ladders {
		if slices.Equal(labels(ms), want) {
			return name
		}
	}
	return ""
}

func TestLadders(t *testing.T) {
	tests := []struct {
		name  string
		o     Options
		count map[string]int
	}{
		{
			name:  "two blocks",
			o:     Options{Seed: 11, Start: t0, Duration: 2 * time.Minute, Calls: 12},
			count: map[string]int{"answered": 6, "busy": 2, "notFound": 2, "cancelled": 2},
		},
		{
			name:  "default minute",
			o:     Options{Seed: 12, Start: t0, Duration: time.Minute},
			count: map[string]int{"answered": 3, "busy": 1, "notFound": 1, "cancelled": 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls, order := sipCalls(t, collect(t, tc.o))
			got := map[string]int{}
			for _, id := range order {
				ms := calls[id]
				o := outcomeOf(ms)
				if o == "" {
					t.Fatalf("call %s has ladder %v, not one of %v", id, labels(ms), ladders)
				}
				got[o]++
				checkDialog(t, id, ms)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.count) {
				t.Fatalf("outcomes %v, want %v", got, tc.count)
			}
		})
	}
}

var sdpPort = regexp.MustCompile(`\r\nm=audio (\d+) RTP/AVP `)

// checkDialog checks the headers that tie a call's messages together.
func checkDialog(t *testing.T, id string, ms []sipMessage) {
	t.Helper()
	branch := func(m sipMessage) string {
		_, b, _ := strings.Cut(m.sip.GetFirstHeader("via"), ";branch=")
		return b
	}
	invite := ms[0]
	for _, m := range ms {
		if !strings.HasPrefix(branch(m), branchCookie) {
			t.Fatalf("call %s %s: Via branch %q lacks %s", id, m.label, branch(m), branchCookie)
		}
		if m.sip.GetFirstHeader("max-forwards") == "" && !m.sip.IsResponse {
			t.Fatalf("call %s %s: request without Max-Forwards", id, m.label)
		}
		if !strings.Contains(m.sip.GetFrom(), ";tag=") {
			t.Fatalf("call %s %s: From without tag: %s", id, m.label, m.sip.GetFrom())
		}
		to := strings.Contains(m.sip.GetTo(), ";tag=")
		if wantTo := m.label != "INVITE" && m.label != "100" && m.label != "CANCEL"; to != wantTo {
			t.Fatalf("call %s %s: To tag present %v, want %v: %s", id, m.label, to, wantTo, m.sip.GetTo())
		}
		if ua := m.sip.GetFirstHeader("user-agent") + m.sip.GetFirstHeader("server"); ua == "" {
			t.Fatalf("call %s %s: neither User-Agent nor Server", id, m.label)
		}
	}
	if !strings.Contains(string(invite.body), "m=audio ") || !strings.Contains(string(invite.body), "telephone-event/8000") {
		t.Fatalf("call %s: INVITE SDP lacks audio or telephone-event:\n%s", id, invite.body)
	}
	for _, m := range ms {
		if len(m.body) == 0 {
			continue
		}
		port, err := strconv.Atoi(sdpPort.FindStringSubmatch(string(m.body))[1])
		if err != nil || port%2 != 0 || port < rtpPortMin || port >= rtpPortMax {
			t.Fatalf("call %s %s: SDP media port %d not even in [%d, %d)", id, m.label, port, rtpPortMin, rtpPortMax)
		}
	}
	if invite.sip.GetContact() == "" {
		t.Fatalf("call %s: INVITE without Contact", id)
	}
	answered := outcomeOf(ms) == "answered"
	for _, m := range ms[1:] {
		_, method, _ := strings.Cut(m.sip.GetFirstHeader("cseq"), " ")
		// CANCEL and a non-2xx ACK belong to the INVITE transaction (RFC 3261
		// §9.1, §17.1.1.3); the ACK for a 200 and the BYE are new ones (§13.2.2.4).
		inviteTxn := method == "INVITE" || method == "CANCEL" || (method == "ACK" && !answered)
		if same := branch(m) == branch(invite); same != inviteTxn {
			t.Fatalf("call %s %s (CSeq %s): shares the INVITE branch %v, want %v", id, m.label, method, same, inviteTxn)
		}
		if method != "BYE" && m.sip.GetCSeq() != invite.sip.GetCSeq() {
			t.Fatalf("call %s %s: CSeq %d, INVITE had %d", id, m.label, m.sip.GetCSeq(), invite.sip.GetCSeq())
		}
	}
	if answered {
		if !strings.Contains(string(ms[3].body), "m=audio ") {
			t.Fatalf("call %s: 200 OK without SDP answer", id)
		}
	}
}
