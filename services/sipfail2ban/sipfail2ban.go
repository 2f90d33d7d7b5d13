package sipfail2ban

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Finding kinds, as sipsecurity names them. They are repeated here so
// that this package stays a leaf; a test checks they agree.
const (
	kindScanner       = "scanner_user_agent"
	kindRegisterFlood = "register_flood"
	kindAuthStorm     = "digest_bruteforce"
	kindInviteFlood   = "invite_flood"
	kindOptionsSweep  = "options_sweep"
)

// PBX is a log format the filter matches.
type PBX string

// The log formats.
const (
	Asterisk   PBX = "asterisk"
	Kamailio   PBX = "kamailio"
	FreeSWITCH PBX = "freeswitch"
)

// PBXs lists every format, in the order an argument lists them.
var PBXs = []PBX{Asterisk, Kamailio, FreeSWITCH}

// BanTime is the jail's bantime, in seconds: an hour, long enough to end
// a scan, short enough that a mistaken ban heals by itself.
const BanTime = 3600

// MinRetry is the least maxretry: a scanner finding's threshold is one
// dialog, but one failed login line is also a mistyped password.
const MinRetry = 5

// Finding is what a rule is built from.
type Finding struct {
	ID     string // sipsecurity's id: kind/address/time, all the box's own
	Kind   string
	Source netip.Addr
	// SourcePort and Local (the target) make the sample line; zero values
	// print a default.
	SourcePort uint16
	Local      netip.AddrPort
	At         time.Time // the sample line's time
	Threshold  int       // events per window that made it a finding
	Window     time.Duration
}

// Rule is a filter and a jail for one finding and one PBX.
type Rule struct {
	Name    string // the filter's and the jail's name
	Log     string // which log, and how the PBX is set to write it
	LogPath string
	Filter  string // filter.d/<Name>.conf
	Jail    string // jail.d/<Name>.conf
	Sample  string // a log line of the source that the failregex matches
	Note    string // what the filter cannot see for this kind; empty when nothing
}

// template is one PBX's log format.
type template struct {
	log, logPath, datePattern string
	// failregex per kind: the lines that count against the source.
	failregex func(kind string) []string
	sample    func(f Finding) string
	note      func(kind string) string
}

var templates = map[PBX]template{
	Asterisk: {
		log:         "Asterisk security log (res_security_log; logger.conf: security => security)",
		logPath:     "/var/log/asterisk/security",
		datePattern: "{^LN-BEG}",
		failregex: func(kind string) []string {
			events := map[string]string{
				kindAuthStorm:     "ChallengeResponseFailed|InvalidPassword",
				kindRegisterFlood: "InvalidAccountID|FailedACL|ChallengeResponseFailed|InvalidPassword|ChallengeSent",
				kindInviteFlood:   "InvalidAccountID|FailedACL|ChallengeResponseFailed|InvalidPassword|ChallengeSent",
				kindScanner:       "InvalidAccountID|FailedACL|ChallengeResponseFailed|InvalidPassword",
				kindOptionsSweep:  "InvalidAccountID|FailedACL",
			}[kind]
			return []string{`^(?:\[\])?\s*SECURITY\[\d+\](?:\[C-[0-9a-f]+\])?:? res_security_log\.c: (?!.*RemoteAddress=.*RemoteAddress=)SecurityEvent="(?:` + events + `)",.*,Service="(?:SIP|PJSIP)",.*,RemoteAddress="IPV[46]/[A-Z]+/<HOST>/\d+"(?:,.*)?$`}
		},
		sample: func(f Finding) string {
			ev := map[string]string{kindAuthStorm: "InvalidPassword", kindRegisterFlood: "InvalidAccountID", kindInviteFlood: "InvalidAccountID",
				kindScanner: "InvalidAccountID", kindOptionsSweep: "InvalidAccountID"}[f.Kind]
			return fmt.Sprintf(`[%s] SECURITY[1234] res_security_log.c: SecurityEvent="%s",EventTV="%s",Severity="Error",Service="PJSIP",EventVersion="1",AccountID="unknown",SessionID="fieldtap-sample",LocalAddress="%s",RemoteAddress="%s"`,
				f.At.UTC().Format("2006-01-02 15:04:05"), ev, f.At.UTC().Format("2006-01-02T15:04:05.000000-0700"), asteriskAddr(f.Local), asteriskAddr(netip.AddrPortFrom(f.Source, f.SourcePort)))
		},
		note: func(kind string) string {
			if kind == kindOptionsSweep {
				return "Asterisk logs no security event for an answered OPTIONS: the filter counts the sweep's requests that name an unknown account or break an ACL."
			}
			return ""
		},
	},
	Kamailio: {
		log:         "Kamailio syslog, the alert of the default kamailio.cfg's WITH_ANTIFLOOD block (pike_check_req: \"ALERT: pike blocking $rm from $fu (IP:$si:$sp)\")",
		logPath:     "/var/log/syslog",
		datePattern: "{^LN-BEG}",
		failregex: func(string) []string {
			return []string{`^\s*(?:\S+\s+)?\S*kamailio(?:\[\d+\])?:\s+(?:\d+\(\d+\)\s+)?ALERT: <script>: (?!.*\(IP:.*\(IP:)ALERT: pike blocking \S+ from \S+ \(IP:<HOST>:\d+\)$`}
		},
		sample: func(f Finding) string {
			method := map[string]string{kindAuthStorm: "REGISTER", kindRegisterFlood: "REGISTER", kindInviteFlood: "INVITE", kindScanner: "OPTIONS", kindOptionsSweep: "OPTIONS"}[f.Kind]
			src := f.Source.String()
			return fmt.Sprintf("%s pbx /usr/sbin/kamailio[1234]: ALERT: <script>: ALERT: pike blocking %s from sip:unknown@invalid (IP:%s:%d)", f.At.UTC().Format(time.Stamp), method, src, port(f.SourcePort))
		},
		note: func(kind string) string {
			if kind == kindAuthStorm || kind == kindOptionsSweep || kind == kindScanner {
				return "The default kamailio.cfg logs failed digests, unknown users and scanners' User-Agents nowhere; the filter counts pike's rate alerts, which fire only when the source also floods. Add an xlog line in the AUTH route to ban on failures."
			}
			return ""
		},
	},
	FreeSWITCH: {
		log:         "FreeSWITCH log (sofia_reg.c warnings; log/freeswitch.log)",
		logPath:     "/var/log/freeswitch/freeswitch.log",
		datePattern: `^(?:%%Y-)?%%m-%%d[ T]%%H:%%M:%%S(?:\.%%f)?`,
		failregex: func(kind string) []string {
			pre := `^\s*(?:\S+\s+\S*freeswitch(?:\[\d+\])?:\s+(?:\d+-)?\d+-\d+[ T]\d+:\d+:\d+\.\d+\s+)?(?:\d+\.\d+%%\s+)?\[WARN(?:ING)?\](?: \[SOFIA\])?\s+\[?sofia_reg\.c:\d+\]? (?!.* from .* from )`
			auth := pre + `SIP auth failure \((?:REGISTER|INVITE)\) on sofia profile '[^']+' for \[[^\]]*\] from ip <HOST>$`
			unknown := pre + `Can't find user \[[^\]]*\] from <HOST>$`
			switch kind {
			case kindRegisterFlood:
				return []string{pre + `SIP auth (?:failure|challenge) \(REGISTER\) on sofia profile '[^']+' for \[[^\]]*\] from ip <HOST>$`}
			case kindInviteFlood:
				return []string{pre + `SIP auth (?:failure|challenge) \(INVITE\) on sofia profile '[^']+' for \[[^\]]*\] from ip <HOST>$`}
			case kindAuthStorm:
				return []string{auth}
			}
			return []string{unknown, auth}
		},
		sample: func(f Finding) string {
			at := f.At.UTC().Format("2006-01-02 15:04:05.000000")
			local := "invalid"
			if f.Local.IsValid() {
				local = f.Local.Addr().Unmap().String()
			}
			switch f.Kind {
			case kindRegisterFlood, kindInviteFlood:
				method := map[string]string{kindRegisterFlood: "REGISTER", kindInviteFlood: "INVITE"}[f.Kind]
				return fmt.Sprintf("%s [WARNING] sofia_reg.c:1792 SIP auth challenge (%s) on sofia profile 'internal' for [unknown@%s] from ip %s", at, method, local, f.Source)
			case kindAuthStorm:
				return fmt.Sprintf("%s [WARNING] sofia_reg.c:1792 SIP auth failure (REGISTER) on sofia profile 'internal' for [unknown@%s] from ip %s", at, local, f.Source)
			}
			return fmt.Sprintf("%s [WARNING] sofia_reg.c:1792 Can't find user [unknown@%s] from %s", at, local, f.Source)
		},
		note: func(kind string) string {
			if kind == kindOptionsSweep {
				return "FreeSWITCH logs nothing for an answered OPTIONS: the filter counts the sweep's requests for unknown users and failed logins."
			}
			return ""
		},
	},
}

// Build writes the rule for f on pbx's logs.
func Build(f Finding, pbx PBX) (Rule, error) {
	tp, ok := templates[pbx]
	if !ok {
		return Rule{}, fmt.Errorf("pbx %q: want one of %s", string(pbx), Names())
	}
	if !slices.Contains([]string{kindScanner, kindRegisterFlood, kindAuthStorm, kindInviteFlood, kindOptionsSweep}, f.Kind) {
		return Rule{}, fmt.Errorf("finding kind %q: not one sip_security_findings reports", f.Kind)
	}
	if !f.Source.IsValid() {
		return Rule{}, fmt.Errorf("the finding has no source address")
	}
	if f.Source.Unmap().IsUnspecified() {
		return Rule{}, fmt.Errorf("source %s is the unspecified address: no host sends from it, and a ban on it means nothing", f.Source)
	}
	if f.Threshold < 1 || f.Window < time.Second {
		return Rule{}, fmt.Errorf("threshold %d per %v: want a threshold of at least 1 and a window of at least 1s", f.Threshold, f.Window)
	}
	f.Source = f.Source.Unmap()
	name := "fieldtap-" + strings.ReplaceAll(f.Kind, "_", "-") + "-" + string(pbx)
	r := Rule{Name: name, Log: tp.log, LogPath: tp.logPath, Sample: tp.sample(f), Note: tp.note(f.Kind)}

	var b strings.Builder
	fmt.Fprintf(&b, "# fail2ban filter for fieldtap's %s findings on the %s.\n", f.Kind, tp.log)
	b.WriteString("# Written from fieldtap's own templates: no text from the captured traffic is in it.\n")
	b.WriteString("# A line naming the address field twice is never matched (a sender cannot plant an address).\n\n")
	b.WriteString("[Definition]\n\n")
	for i, re := range tp.failregex(f.Kind) {
		if i == 0 {
			b.WriteString("failregex = " + re + "\n")
		} else {
			b.WriteString("            " + re + "\n")
		}
	}
	b.WriteString("\nignoreregex =\n\n")
	b.WriteString("datepattern = " + tp.datePattern + "\n")
	r.Filter = b.String()

	b.Reset()
	fmt.Fprintf(&b, "# fail2ban jail for fieldtap finding %s: %s from %s, at least %d in %v.\n", f.ID, f.Kind, f.Source, f.Threshold, f.Window)
	fmt.Fprintf(&b, "[%s]\n", name)
	b.WriteString("enabled  = true\n")
	fmt.Fprintf(&b, "filter   = %s\n", name)
	fmt.Fprintf(&b, "logpath  = %s\n", tp.logPath)
	b.WriteString("port     = 5060,5061\n")
	b.WriteString("action_  = %(default/action_)s[name=%(__name__)s-tcp, protocol=\"tcp\"]\n")
	b.WriteString("           %(default/action_)s[name=%(__name__)s-udp, protocol=\"udp\"]\n")
	fmt.Fprintf(&b, "maxretry = %d\n", max(f.Threshold, MinRetry))
	fmt.Fprintf(&b, "findtime = %d\n", int(f.Window/time.Second))
	fmt.Fprintf(&b, "bantime  = %d\n", BanTime)
	b.WriteString("usedns   = no\n")
	r.Jail = b.String()
	return r, nil
}

// Names lists the formats for an error or a schema.
func Names() string {
	s := make([]string, len(PBXs))
	for i, p := range PBXs {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// Guess names the PBX a User-Agent or Server value announces, as Asterisk,
// Kamailio and FreeSWITCH write theirs by default.
func Guess(userAgent string) (PBX, bool) {
	l := strings.ToLower(userAgent)
	for _, p := range PBXs {
		if strings.Contains(l, string(p)) {
			return p, true
		}
	}
	return "", false
}

// asteriskAddr prints an address as Asterisk's security events do.
func asteriskAddr(ap netip.AddrPort) string {
	a := ap.Addr().Unmap()
	if !a.IsValid() {
		a = netip.IPv4Unspecified()
	}
	v := "IPV4"
	if a.Is6() {
		v = "IPV6"
	}
	return fmt.Sprintf("%s/UDP/%s/%d", v, a, port(ap.Port()))
}

// port is p, or 5060 when unknown.
func port(p uint16) uint16 {
	if p == 0 {
		return 5060
	}
	return p
}
