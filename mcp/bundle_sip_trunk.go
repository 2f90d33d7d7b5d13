package mcp

import (
	"crypto/tls"
	"math"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/trunk"
)

// textTLS names who wrote the TLS text trunk_health quotes.
const textTLS textSource = "the TLS peers on SIPS ports (the server name a client asked for, the server certificate's subject and issuer)"

type trunkHealthIn struct {
	ProblemsOnly bool `json:"problems_only,omitempty" jsonschema:"only flows with a retransmission, out-of-order segment, zero window or reset, a TLS handshake that did not complete, a clear alert other than close_notify, or a certificate expiring within 30 days"`
	Paging
	Projection
}

// certWarnDays is how near expiry a certificate counts as a problem.
const certWarnDays = 30

var trunkHealth = tool[trunkHealthIn, page[trunkFlowRow]]{
	name:  "trunk_health",
	reads: readsSIP,
	desc: "SIP trunks over TCP and TLS without keys, one row per TCP flow on 5060 or a SIPS port: retransmissions, out-of-order, zero windows and resets per side (as tshark's tcp.analysis counts them); " +
		"on SIPS ports the TLS handshake's outcome, alerts, version, cipher suite, SNI and (TLS 1.2 and earlier) the server certificate's subject, issuer and expiry. Paged, oldest flow first.",
	hints: readOnly(),
	ids:   []string{"flow"},
	text:  []textSource{textTLS},
	run: func(c *call, in trunkHealthIn) (page[trunkFlowRow], error) {
		flows, st := c.d.Trunk.Flows()
		if st.Evicted > 0 {
			c.warnf("%d flows were evicted, least recently seen first, to keep the table's bound of %d flows; their figures are gone", st.Evicted, st.MaxFlows)
		}
		rows := make([]trunkFlowRow, 0, len(flows))
		for i := range flows {
			r := trunkFlowRowOf(&flows[i])
			if !in.ProblemsOnly || r.problem() {
				rows = append(rows, r)
			}
		}
		return pageSlice(c, in.Paging, rows, func(r trunkFlowRow) rowKey { return key1(r.Flow) })
	},
}

// trunkFlowRowOf is f as trunk_health shows it.
func trunkFlowRowOf(f *trunk.Flow) trunkFlowRow {
	r := trunkFlowRow{Flow: f.ID, Client: f.Client.String(), Server: f.Server.String(), ClientFromSYN: f.ClientKnown,
		First: ts(f.First), Last: ts(f.Last), FromClient: tcpCountsRowOf(f.FromClient), FromServer: tcpCountsRowOf(f.FromServer),
		Fin: f.Fin, Reset: f.Reset}
	if f.IRTT > 0 {
		r.IRTTms = ms(f.IRTT, true)
	}
	if f.TLS == nil {
		return r
	}
	t := f.TLS
	row := &trunkTLSRow{Outcome: f.Outcome(), ClientHello: t.ClientHello, ServerHello: t.ServerHello, HelloRetry: t.HelloRetry,
		Alerts: make([]tlsAlertRow, 0, len(t.Alerts)), AlertsDropped: t.AlertsDropped, Problem: t.Problem}
	if t.ServerHello {
		v, cs := tls.VersionName(t.Version), tls.CipherSuiteName(t.Cipher)
		row.Version, row.CipherSuite = &v, &cs
	}
	if t.SNI != "" {
		sni := untrusted.Text(t.SNI)
		row.SNI = &sni
	}
	for _, a := range t.Alerts {
		ar := tlsAlertRow{Time: ts(a.Time), From: "client", Encrypted: a.Encrypted}
		if a.FromServer {
			ar.From = "server"
		}
		if !a.Encrypted {
			l, d := trunk.LevelName(a.Level), trunk.AlertName(a.Desc)
			ar.Level, ar.Description = &l, &d
		}
		row.Alerts = append(row.Alerts, ar)
	}
	switch {
	case t.Cert != nil:
		cr := tlsCertRowOf(t.Cert)
		row.Certificate = &cr
	case t.ServerHello && t.Version >= tls.VersionTLS13:
		row.CertificateNote = "TLS 1.3 encrypts the certificate: it cannot be seen without keys"
	case t.ServerHello:
		row.CertificateNote = "no clear Certificate message was seen (resumed session, anonymous or PSK suite, or bytes lost)"
	default:
		row.CertificateNote = "no ServerHello was seen"
	}
	r.TLS = row
	return r
}

func tlsCertRowOf(c *trunk.Certificate) tlsCertRow {
	return tlsCertRow{Subject: untrusted.Text(c.Subject), Issuer: untrusted.Text(c.Issuer), NotBefore: ts(c.NotBefore), NotAfter: ts(c.NotAfter),
		DaysToExpiry: int(math.Floor(c.NotAfter.Sub(c.SeenAt).Hours() / 24)), SeenAt: ts(c.SeenAt), Chain: c.Chain,
		Expired: !c.SeenAt.Before(c.NotAfter)}
}

// problem reports a row problems_only keeps.
func (r trunkFlowRow) problem() bool {
	for _, c := range []tcpCountsRow{r.FromClient, r.FromServer} {
		if c.Retransmissions+c.OutOfOrder+c.ZeroWindows+c.Resets+c.SpuriousRetransmissions > 0 {
			return true
		}
	}
	t := r.TLS
	return t != nil && (t.Outcome != "completed" || len(t.Alerts) > 0 && !closeNotifyOnly(t.Alerts) ||
		t.Certificate != nil && t.Certificate.DaysToExpiry < certWarnDays)
}

// closeNotifyOnly reports alerts that are all clear close_notify or
// encrypted (of a completed handshake, problem's only caller: an orderly
// end is the usual encrypted alert).
func closeNotifyOnly(as []tlsAlertRow) bool {
	for _, a := range as {
		if !a.Encrypted && *a.Description != "close_notify" {
			return false
		}
	}
	return true
}
