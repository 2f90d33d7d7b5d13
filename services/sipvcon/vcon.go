package sipvcon

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"fieldtap/services/sip"
	"fieldtap/services/siplint"
	"fieldtap/services/srtp"
)

// Vendor names the box in every Analysis Object.
const (
	Vendor         = "fieldtap"
	Product        = "fieldtap SIP analyser"
	AnalysisSchema = "fieldtap-sip-call-1" // the body's shape, below (callAnalysis)
	// MediaTypePcapng is the pcapng attachment's type (the tcpdump.org
	// name; IANA has only application/vnd.tcpdump.pcap, for pcap).
	MediaTypePcapng = "application/x-pcapng"
	// MaxPartyText caps a party's name or URI: a sender can make either
	// as long as a message.
	MaxPartyText = 256
)

// VCon is the unsigned form of a vCon, the keys this box fills.
type VCon struct {
	UUID        string       `json:"uuid"`
	CreatedAt   string       `json:"created_at"`
	Parties     []Party      `json:"parties"`
	Dialog      []Dialog     `json:"dialog"`
	Analysis    []Analysis   `json:"analysis"`
	Attachments []Attachment `json:"attachments"`
}

// Party is one participant: a SIP or tel URI and a display name, as the
// From or To header wrote them, or the box itself (the analyses' and
// attachments' contributor).
type Party struct {
	SIP  string `json:"sip,omitempty"`
	Tel  string `json:"tel,omitempty"`
	Name string `json:"name,omitempty"`
	Type string `json:"type,omitempty"`
}

// Dialog is one SIP dialog (one Call-ID).
type Dialog struct {
	Type        string     `json:"type"`
	Start       string     `json:"start"`
	Duration    float64    `json:"duration"`
	Parties     []int      `json:"parties"`
	Application string     `json:"application"`
	MediaType   string     `json:"mediatype,omitempty"`
	Encoding    string     `json:"encoding,omitempty"`
	Body        []Message  `json:"body,omitempty"`
	Disposition string     `json:"disposition,omitempty"`
	SessionID   *SessionID `json:"session_id,omitempty"`
}

// SessionID is RFC 7989's Session-ID as the vCon carries it.
type SessionID struct {
	Local  string `json:"local,omitempty"`
	Remote string `json:"remote,omitempty"`
}

// Message is one SIP message as captured; Text is its bytes (invalid
// UTF-8 replaced, which JSON cannot carry).
type Message struct {
	Time      string `json:"time"`
	Src       string `json:"src"`
	Dst       string `json:"dst"`
	Transport string `json:"transport"`
	Text      string `json:"text"`
}

// Analysis is one of the box's findings about a dialog.
type Analysis struct {
	Type      string `json:"type"`
	Dialog    int    `json:"dialog"`
	MediaType string `json:"mediatype"`
	Vendor    string `json:"vendor"`
	Product   string `json:"product"`
	Schema    string `json:"schema"`
	Encoding  string `json:"encoding"`
	Body      any    `json:"body"`
}

// Attachment is an ancillary file: the SIP messages of an incomplete
// dialog (which may carry no content), or the calls' pcapng.
type Attachment struct {
	Purpose   string `json:"purpose"`
	Start     string `json:"start"`
	Party     int    `json:"party"`
	Dialog    int    `json:"dialog"`
	MediaType string `json:"mediatype"`
	Filename  string `json:"filename,omitempty"`
	Encoding  string `json:"encoding"`
	Body      any    `json:"body"`
}

// Call is one dialog to put in the vCon, with the box's lint of it.
type Call struct {
	D    *sip.Dialog
	Lint siplint.Result
}

// Input is what Build needs.
type Input struct {
	Snapshot *sip.Snapshot
	Calls    []Call // oldest first
	Now      time.Time
	Host     string // the box's host name: the uuid's FQHN and its party's name
	RandA    uint16 // 12 random bits for the uuid
	// Pcapng is the calls' frames as one pcapng file, nil for none;
	// PcapngName its file name.
	Pcapng     []byte
	PcapngName string
}

// Counts says what Build left out.
type Counts struct {
	MessagesEvicted int // kept by index, bytes gone: not in the vCon
	MessagesShed    int // past the per-dialog cap, never kept
}

// callAnalysis is the Analysis body (schema AnalysisSchema).
type callAnalysis struct {
	CallID       string          `json:"call_id"`
	State        string          `json:"state"`
	FinalCode    int             `json:"final_code,omitempty"`
	Transactions int             `json:"transactions"`
	Lint         []lintViolation `json:"lint_violations"`
	Evaluated    []string        `json:"lint_rules_evaluated"`
	NotEvaluated []lintSkip      `json:"lint_rules_not_evaluated"`
}

type lintViolation struct {
	Rule     string `json:"rule"`
	RFC      string `json:"rfc"`
	Section  string `json:"section"`
	Severity string `json:"severity"`
	CSeq     uint32 `json:"cseq,omitempty"`
	Detail   string `json:"detail"`
}

type lintSkip struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
}

// Build makes the vCon of in.Calls (at least one).
func Build(in Input) (VCon, Counts) {
	v := VCon{UUID: UUIDv8(in.Now, in.Host, in.RandA), CreatedAt: in.Now.UTC().Format(time.RFC3339Nano),
		Parties: []Party{}, Dialog: []Dialog{}, Analysis: []Analysis{}, Attachments: []Attachment{}}
	var n Counts
	partyOf := map[Party]int{}
	party := func(p Party) int {
		if i, ok := partyOf[p]; ok {
			return i
		}
		partyOf[p] = len(v.Parties)
		v.Parties = append(v.Parties, p)
		return len(v.Parties) - 1
	}
	var attach []Attachment // the box party's index is known only at the end
	for _, c := range in.Calls {
		d := c.D
		msgs, from, to, evicted := messages(in.Snapshot, d)
		n.MessagesEvicted += evicted
		n.MessagesShed += d.MessagesShed
		di := len(v.Dialog)
		end := d.Updated
		if !d.ByeAt.IsZero() {
			end = d.ByeAt
		}
		dl := Dialog{Start: d.Created.UTC().Format(time.RFC3339Nano), Duration: max(0, end.Sub(d.Created).Seconds()),
			Parties: []int{party(from), party(to)}, Application: "SIP"}
		if disp := disposition(d); disp != "" {
			dl.Type, dl.Disposition = "incomplete", disp
			attach = append(attach, Attachment{Purpose: "the SIP messages of an incomplete dialog, as captured", Start: dl.Start, Dialog: di,
				MediaType: "application/json", Encoding: "json", Body: msgs})
		} else {
			dl.Type, dl.MediaType, dl.Encoding, dl.Body = "text", "application/json", "json", msgs
		}
		if len(d.SessionIDs) > 0 {
			dl.SessionID = &SessionID{Local: d.SessionIDs[0]}
			if len(d.SessionIDs) > 1 {
				dl.SessionID.Remote = d.SessionIDs[1]
			}
		}
		v.Dialog = append(v.Dialog, dl)
		v.Analysis = append(v.Analysis, Analysis{Type: "report", Dialog: di, MediaType: "application/json", Vendor: Vendor, Product: Product,
			Schema: AnalysisSchema, Encoding: "json", Body: analysisOf(d, c.Lint)})
	}
	box := party(Party{Name: truncate("fieldtap capture appliance " + in.Host), Type: "recorder"})
	if len(in.Pcapng) > 0 && len(in.Calls) > 0 {
		attach = append(attach, Attachment{Purpose: "the frames of the dialogs and their media (SIP, RTP, RTCP) as the box captured them",
			Start: in.Calls[0].D.Created.UTC().Format(time.RFC3339Nano), Dialog: 0, MediaType: MediaTypePcapng, Filename: in.PcapngName,
			Encoding: "base64url", Body: base64.RawURLEncoding.EncodeToString(in.Pcapng)})
	}
	for _, a := range attach {
		a.Party = box
		v.Attachments = append(v.Attachments, a)
	}
	return v, n
}

// disposition maps a failed INVITE dialog to the draft's dispositions;
// "" for one that got past setup (or was never a call).
func disposition(d *sip.Dialog) string {
	switch {
	case d.State == sip.StateCancelled:
		return "no-answer"
	case d.State != sip.StateFailed:
		return ""
	case d.FinalCode == 486 || d.FinalCode == 600:
		return "busy"
	case d.FinalCode == 408 || d.FinalCode == 480 || d.FinalCode == 487:
		return "no-answer"
	case d.FinalCode == 503:
		return "congestion"
	default:
		return "failed"
	}
}

func analysisOf(d *sip.Dialog, r siplint.Result) callAnalysis {
	a := callAnalysis{CallID: d.CallID, State: d.State, FinalCode: d.FinalCode, Transactions: d.Transactions,
		Lint: []lintViolation{}, Evaluated: append([]string{}, r.Evaluated...), NotEvaluated: []lintSkip{}}
	for _, x := range r.Violations {
		a.Lint = append(a.Lint, lintViolation{Rule: x.Rule.ID, RFC: x.Rule.RFC, Section: x.Rule.Section, Severity: string(x.Rule.Severity), CSeq: x.CSeq, Detail: x.Detail})
	}
	for _, x := range r.NotEvaluated {
		a.NotEvaluated = append(a.NotEvaluated, lintSkip{Rule: x.Rule.ID, Reason: x.Reason})
	}
	return a
}

// messages returns d's kept messages and its parties, read from the
// first request's From and To (the first message's when no request was
// kept).
func messages(sn *sip.Snapshot, d *sip.Dialog) (msgs []Message, from, to Party, evicted int) {
	msgs = []Message{}
	var p sip.Parsed
	found := false
	for _, seq := range d.Messages() {
		m, ok := sn.Message(seq)
		if !ok {
			evicted++
			continue
		}
		msgs = append(msgs, Message{Time: m.Time.UTC().Format(time.RFC3339Nano), Src: m.Src.String(), Dst: m.Dst.String(),
			Transport: m.Transport, Text: strings.ToValidUTF8(string(redacted(m.Raw)), "\uFFFD")})
		// The first request's From and To (a later one may come from the
		// callee, its From and To swapped); a response's until then.
		if !found && (m.Request || from == (Party{})) && p.Parse(m.Raw) == nil {
			from, to = partyOfHeader(p.Get(sip.HFrom)), partyOfHeader(p.Get(sip.HTo))
			found = m.Request
		}
	}
	if from == (Party{}) {
		from.Name = truncate(d.FromUser)
	}
	if to == (Party{}) {
		to.Name = truncate(d.ToUser)
	}
	return msgs, from, to, evicted
}

// partyOfHeader reads a From or To value: its URI without parameters
// (sip:, sips: or tel:) and its display name.
func partyOfHeader(v []byte) Party {
	var p Party
	uri := sip.URIOf(v)
	if i := bytes.IndexByte(uri, ';'); i >= 0 && !bytes.HasPrefix(bytes.ToLower(uri), []byte("tel:")) {
		uri = uri[:i]
	}
	switch u := strings.ToValidUTF8(string(uri), ""); {
	case hasPrefixFold(u, "sip:"), hasPrefixFold(u, "sips:"):
		p.SIP = truncate(u)
	case hasPrefixFold(u, "tel:"):
		p.Tel = truncate(u)
	}
	if name := strings.Trim(strings.ToValidUTF8(string(sip.DisplayName(v)), ""), `"`); name != "" {
		p.Name = truncate(name)
	}
	return p
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func truncate(s string) string {
	if len(s) <= MaxPartyText {
		return s
	}
	return strings.ToValidUTF8(s[:MaxPartyText], "") + "…"
}

// String names a vCon for logs.
func (v VCon) String() string { return fmt.Sprintf("vCon %s (%d dialogs)", v.UUID, len(v.Dialog)) }

// redacted is a message with its SDES keys (a=crypto inline:) masked: a
// vCon is shared, and key material never leaves the box in one.
func redacted(raw []byte) []byte {
	b, _ := srtp.Redact(raw)
	return b
}
