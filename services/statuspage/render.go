package statuspage

import (
	"fmt"
	"html"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The page is written by plain Go rather than html/template: a template
// engine's reflection keeps every exported method of every type in the
// binary, about 3 MB of the arm64 daemon. Every value from the box, the
// operator or the wire goes through html.EscapeString (esc); the rest is
// fixed markup.

// refresh is how often the page reloads itself: a glance every few
// seconds is enough, and a refresh costs the box one Build.
const refresh = 10 * time.Second

// head is the page up to the refresh interval.
const head = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="`

const style = `<style>
body{font:15px/1.4 system-ui,sans-serif;margin:0;padding:8px;max-width:640px;color:#111;background:#fafafa}
h1{font-size:18px;margin:4px 0}h2{font-size:16px;margin:14px 0 4px;border-bottom:1px solid #ccc}
.banner{padding:10px;border-radius:6px;font-weight:600;font-size:17px}
.armed{background:#b00020;color:#fff}.safe{background:#1b5e20;color:#fff}
table{border-collapse:collapse;width:100%;font-size:13px}td,th{padding:3px 4px;text-align:left;border-bottom:1px solid #e4e4e4;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:#666}.warn{color:#b00020;font-weight:600}
.chart{width:100%;height:auto;background:#fff;border:1px solid #ddd}
small{color:#666}
</style>
</head>
<body>
`

var esc = html.EscapeString

// page accumulates the HTML; w is raw markup, e escaped text.
type page struct{ strings.Builder }

func (p *page) w(s ...string) {
	for _, x := range s {
		p.WriteString(x)
	}
}

func (p *page) e(s string) { p.WriteString(esc(s)) }

// pick is a when b holds, else c.
func pick(b bool, a, c string) string {
	if b {
		return a
	}
	return c
}

func u64(n uint64) string { return strconv.FormatUint(n, 10) }
func itoa(n int) string   { return strconv.Itoa(n) }
func pct(f float64) string {
	return fmt.Sprintf("%.1f%%", f*100)
}
func f1(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// Render writes the page for s.
func Render(w io.Writer, s Status) error {
	var p page
	refreshS := itoa(int(refresh / time.Second))
	tv := s.Transmit
	p.w(head, refreshS, "\">\n<link rel=\"icon\" href=\"data:,\">\n<title>fieldtap ")
	p.e(s.Box.Board)
	p.w(pick(tv.KeySwitch.On, " · ARMED", ""), "</title>\n", style)
	p.w("<h1>fieldtap · ")
	p.e(s.Box.Board)
	p.w(" <small>")
	p.e(s.Box.Version)
	p.w(" · up ", (time.Duration(s.Box.UptimeS) * time.Second).String(), " · ", s.Generated.Format("2006-01-02 15:04:05"), " UTC</small></h1>\n\n")
	p.transmit(tv)
	p.rules(s.Rules, s.RulesReason, s.Generated)
	p.ports(s.Ports)
	p.busLoad(s.BusLoad)
	p.faults(s.Faults)
	p.voip(s.VoIP, s.VoIPReason)
	p.recorder(s.Recorder, s.RecorderReason)
	p.w("\n<p><small>Read-only. Refreshes every ", refreshS, ` s · <a href="status.json">status.json</a> · <a href="metrics">metrics</a></small></p>`+"\n</body>\n</html>\n")
	_, err := io.WriteString(w, p.String())
	return err
}

func (p *page) transmit(t TransmitView) {
	on := t.KeySwitch.On
	p.w("\n<section id=\"transmit\">\n<div id=\"arm-state\" class=\"banner ", pick(on, "armed", "safe"), "\">",
		pick(on, "TRANSMIT ARMED", "Transmit disarmed"), ` · <span id="sending">`)
	p.e(t.Sending)
	p.w("</span></div>\n<table>\n<tr><th>Key switch</th><td id=\"key-switch\">", pick(on, "on", "off"), " <small>(")
	p.e(t.KeySwitch.Input)
	p.w(": ")
	p.e(t.KeySwitch.Where)
	if t.KeySwitch.Changes != 0 {
		p.w(", ", u64(t.KeySwitch.Changes), " changes")
	}
	p.w(")</small></td></tr>\n<tr><th>Armed LED</th><td>")
	if t.ArmedLED != nil {
		p.w(pick(*t.ArmedLED, "on", "off"))
	} else {
		p.w(`<span class="muted">`)
		p.e(t.ArmedLEDReason)
		p.w("</span>")
	}
	p.w("</td></tr>\n")
	if t.Available {
		p.w("\n<tr><th>Pending plans</th><td id=\"plans-pending\">", itoa(t.PlansPending), "</td></tr>\n")
		p.w("<tr><th>Confirmations waiting</th><td id=\"confirmations-pending\">", itoa(t.ConfirmationsPending), "</td></tr>\n")
		p.w("<tr><th>Transmit enabled on</th><td>")
		if len(t.EnabledPorts) > 0 {
			p.e(strings.Join(t.EnabledPorts, ", "))
		} else {
			p.w(`<span class="muted">no port</span>`)
		}
		p.w("</td></tr>\n<tr><th>Could send now</th><td>")
		if len(t.CanSendNow) > 0 {
			p.w(`<span class="warn">`)
			p.e(strings.Join(t.CanSendNow, ", "))
			p.w("</span>")
		} else {
			p.w(`<span class="muted">no port</span>`)
		}
		p.w("</td></tr>\n")
	} else {
		p.w("\n<tr><th>Transmitter</th><td class=\"muted\">")
		p.e(t.Reason)
		p.w("</td></tr>\n")
	}
	p.w("\n</table>\n")
	if len(t.Recent) > 0 {
		p.w(`<table><tr><th>Recent</th><th>port</th><th>event</th><th>gate</th><th class="n">frames</th></tr>` + "\n")
		for _, r := range t.Recent {
			p.w("<tr><td>", r.Time.UTC().Format("15:04:05"), "</td><td>")
			p.e(r.Port)
			p.w("</td><td>")
			p.e(r.Event)
			p.w("</td><td>")
			p.e(r.Gate)
			p.w(`</td><td class="n">`, itoa(r.Sent), "</td></tr>")
		}
		p.w("</table>")
	}
	p.w("\n</section>\n\n")
}

func (p *page) ports(ps []PortView) {
	p.w("\n<h2>Ports</h2>\n<table id=\"ports\">\n" +
		`<tr><th>port</th><th class="n">frames/s</th><th class="n">last frame</th><th class="n">drops 1 min / total</th><th class="n">restarts</th><th class="n">store</th></tr>` + "\n")
	for _, v := range ps {
		p.w(`<tr id="port-`)
		p.e(v.Name)
		p.w(`"><td>`)
		p.e(v.Name)
		p.w(" <small>")
		p.e(v.Kind)
		p.w(pick(v.Live, " · live", ""), `</small><br><span class="state`, pick(v.State != "capturing", " warn", ""), `">`)
		p.e(v.State)
		p.w("</span>")
		if v.StateSince != nil {
			p.w(` <small class="since">since `, v.StateSince.UTC().Format("01-02 15:04:05"), "</small>")
		}
		if v.StoppedEarly != "" {
			p.w(`<br><span class="warn">`)
			p.e(v.StoppedEarly)
			p.w("</span>")
		}
		p.w("</td>\n<td class=\"n fps\">")
		if v.FramesPerS != nil {
			p.w(f1(*v.FramesPerS))
		} else {
			p.w("<small>n/a</small>")
		}
		p.w("<br><small>", u64(v.Frames), " frames</small></td>\n<td class=\"n age\">")
		if v.LastFrameAgeS != nil {
			p.w(f1(*v.LastFrameAgeS), " s ago")
		} else {
			p.w("<small>")
			p.e(v.LastFrameAgeReason)
			p.w("</small>")
		}
		p.w("</td>\n<td class=\"n drops", pick(v.DropsTotal != 0, " warn", ""), `"><span class="minute">`)
		if v.DropsLastMinute != nil {
			p.w(u64(*v.DropsLastMinute))
		} else {
			p.w("n/a")
		}
		p.w(`</span> / <span class="total">`, u64(v.DropsTotal), "</span>")
		for _, k := range slices.Sorted(maps.Keys(v.Drops)) {
			if n := v.Drops[k]; n != 0 {
				p.w("<br><small>")
				p.e(k)
				p.w(" ", u64(n), "</small>")
			}
		}
		p.w("</td>\n<td class=\"n\">")
		if v.Restarts != nil {
			p.w(u64(*v.Restarts))
		} else {
			p.w("<small>n/a</small>")
		}
		p.w(`</td><td class="n">`, pct(v.StoreUse))
		if v.StoreEvicted != 0 {
			p.w("<br><small>", u64(v.StoreEvicted), " evicted</small>")
		}
		p.w("</td></tr>\n")
	}
	if len(ps) == 0 {
		p.w(`<tr><td colspan="6" class="muted">no port</td></tr>`)
	}
	p.w("\n</table>\n")
}

func (p *page) busLoad(ls []LoadSeries) {
	p.w("\n<h2>Bus load, last hour</h2>\n")
	for _, l := range ls {
		p.w("<div><b>")
		p.e(l.Port)
		p.w("</b> <small>peak ", pct(l.PeakMax), " · solid: mean per minute, dashed: busiest second</small>", LoadChart(l), "</div>\n")
	}
	if len(ls) == 0 {
		p.w(`<p class="muted">no CAN port</p>`)
	}
	p.w("\n")
}

func (p *page) faults(f FaultsView) {
	p.w("\n<h2>Active faults</h2>\n\n")
	if f.J1939Reason != "" {
		p.w(`<p class="muted">J1939: `)
		p.e(f.J1939Reason)
		p.w("</p>")
	} else {
		p.w("\n" + `<table id="j1939-faults"><tr><th>J1939 source</th><th class="n">SPN</th><th class="n">FMI</th><th class="n">OC</th><th>lamps</th></tr>` + "\n")
		for _, d := range f.J1939 {
			p.w("<tr><td>")
			p.e(d.Port)
			p.w(" ", fmt.Sprintf("%02X", d.SA), " <small>")
			p.e(d.SAName)
			p.w(`</small></td><td class="n">`, u64(uint64(d.SPN)), `</td><td class="n">`, itoa(int(d.FMI)), `</td><td class="n">`, itoa(int(d.OC)), "</td><td>")
			p.e(strings.Join(d.Lamps, ", "))
			p.w("</td></tr>\n")
		}
		if len(f.J1939) == 0 {
			p.w(`<tr><td colspan="5" class="muted">no active DM1 fault</td></tr>`)
		}
		p.w("</table>")
	}
	p.w("\n")
	if f.J1587Reason != "" {
		p.w(`<p class="muted">J1587: `)
		p.e(f.J1587Reason)
		p.w("</p>")
	} else {
		p.w("\n" + `<table id="j1587-faults"><tr><th>J1587 MID</th><th>code</th><th class="n">FMI</th><th class="n">count</th></tr>` + "\n")
		for _, d := range f.J1587 {
			p.w("<tr><td>", itoa(d.MID), " <small>")
			p.e(d.MIDName)
			p.w("</small></td><td>", pick(d.IsSID, "SID", "PID"), " ", itoa(d.Code), " <small>")
			p.e(d.CodeName)
			p.w(`</small></td><td class="n">`, itoa(d.FMI), `</td><td class="n">`)
			if d.Count != nil {
				p.w(itoa(*d.Count))
			}
			p.w("</td></tr>\n")
		}
		if len(f.J1587) == 0 {
			p.w(`<tr><td colspan="4" class="muted">no active code</td></tr>`)
		}
		p.w("</table>")
	}
	p.w("\n\n")
}

func (p *page) voip(v *VoIPView, reason string) {
	p.w("\n<h2>VoIP</h2>\n")
	if v == nil {
		p.w(`<p class="muted">`)
		p.e(reason)
		p.w("</p>\n")
		return
	}
	p.w("\n<table id=\"voip\">\n<tr><th>Calls</th><td class=\"n\">", itoa(v.Calls), " <small>(", itoa(v.Active), " up now)</small></td></tr>\n")
	p.w(`<tr><th>ASR</th><td class="n">`)
	if v.ASR != nil {
		p.w(pct(*v.ASR), " <small>", itoa(v.Answered), " of ", itoa(v.Attempts), "</small>")
	} else {
		p.w("<small>")
		p.e(v.ASRReason)
		p.w("</small>")
	}
	p.w("</td></tr>\n<tr><th>One-way audio</th><td class=\"n", pick(v.OneWayCount != 0, " warn", ""), `">`, itoa(v.OneWayCount))
	for _, c := range v.OneWay {
		p.w("<br><small>")
		p.e(c)
		p.w("</small>")
	}
	p.w("</td></tr>\n</table>\n" + `<table id="mos"><tr><th>MOS band</th><th class="n">streams</th></tr>` + "\n")
	for _, b := range v.MOS.Bands {
		p.w("<tr><td>", fmt.Sprintf("%.2f–%.2f", b.Min, b.Max), " <small>")
		p.e(b.Label)
		p.w(`</small></td><td class="n">`, itoa(b.Streams), "</td></tr>")
	}
	p.w("\n"+`<tr><td class="muted">of `, itoa(v.MOS.Streams), " streams")
	if v.MOS.NotGrounded != 0 {
		p.w("; ", itoa(v.MOS.NotGrounded), " with no MOS basis")
	}
	p.w("</td><td></td></tr>\n</table>\n\n")
}

func (p *page) recorder(r *RecorderView, reason string) {
	p.w("\n<h2>Recorder</h2>\n")
	if r == nil {
		p.w(`<p id="recorder" class="muted">`)
		p.e(reason)
		p.w("</p>\n")
		return
	}
	const stamp = "01-02 15:04:05"
	p.w("\n<table id=\"recorder\">\n"+`<tr><th>State</th><td id="recorder-state" class="`, pick(r.State != "recording", "warn", ""), `">`)
	p.e(r.State)
	if r.Reason != "" {
		p.w(" <small>")
		p.e(r.Reason)
		p.w("</small>")
	}
	if r.WriteErrors != 0 {
		p.w(" <small>", u64(r.WriteErrors), " write errors</small>")
	}
	p.w("</td></tr>\n"+`<tr><th>Storage</th><td id="recorder-storage">`, humanBytes(r.UsedBytes), " of ", humanBytes(r.LimitBytes))
	if r.FreeBytes != nil {
		p.w(`, <span id="recorder-free">`, humanBytes(*r.FreeBytes), "</span> free on disk")
	} else {
		p.w(", free space unknown")
	}
	p.w(" <small>", itoa(r.Segments), " segments in ")
	p.e(r.Dir)
	p.w("</small></td></tr>\n" + `<tr><th>Oldest segment</th><td id="recorder-oldest">`)
	if r.Oldest != nil {
		p.w(r.Oldest.UTC().Format(stamp))
		if r.Newest != nil {
			p.w(" to ", r.Newest.UTC().Format(stamp))
		}
		p.w(" UTC")
	} else {
		p.w(`<span class="muted">nothing on disk yet</span>`)
	}
	p.w("</td></tr>\n<tr><th>Gaps</th><td class=\"", pick(r.GapsTotal != 0, "warn", ""), `">`, u64(r.GapsTotal))
	for _, g := range r.Gaps {
		p.w("<br><small>", g.Start.UTC().Format(stamp), "–")
		if g.End != nil {
			p.w(g.End.UTC().Format("15:04:05"))
		} else {
			p.w("now")
		}
		p.w(" ")
		p.e(g.Reason)
		p.w("</small>")
	}
	p.w("</td></tr>\n</table>\n\n")
}

// rules shows the rules firing, right under the transmit banner: what the
// box itself has noticed is the first thing a tech should read.
func (p *page) rules(r *RulesView, reason string, now time.Time) {
	p.w("\n<h2>Rules</h2>\n")
	if r == nil {
		p.w(`<p id="rules" class="muted">`)
		p.e(reason)
		p.w("</p>\n")
		return
	}
	p.w(`<p id="rules-count"><span`, pick(len(r.Firing) > 0, ` class="warn"`, ""), `><span id="rules-firing-n">`, itoa(len(r.Firing)), "</span> firing</span> · ",
		`<span id="rules-pending-n">`, itoa(r.Pending), "</span> pending · ",
		`<span id="rules-ok-n">`, itoa(r.OK), "</span> ok · ",
		`<span id="rules-nodata-n">`, itoa(r.NoData), "</span> no data</p>\n")
	if len(r.Firing) == 0 {
		return
	}
	p.w("<table id=\"rules-firing\">\n<tr><th>Rule</th><th>Severity</th><th>Since</th><th class=\"n\">Value</th></tr>\n")
	for _, f := range r.Firing {
		p.w(`<tr id="rule-`)
		p.e(f.Name)
		p.w(`"><td><span class="name">`)
		p.e(f.Name)
		p.w("</span>")
		if f.Port != "" {
			p.w(` <small class="port">`)
			p.e(f.Port)
			p.w("</small>")
		}
		p.w(`</td><td class="severity`, pick(f.Severity == "critical", " warn", ""), `">`)
		p.e(f.Severity)
		p.w(`</td><td class="since">`, f.Since.Format("01-02 15:04:05"), " UTC <small>(", now.Sub(f.Since).Round(time.Second).String(), `)</small></td><td class="n">`,
			strconv.FormatFloat(f.Value, 'f', -1, 64), "</td></tr>\n")
	}
	p.w("</table>\n")
}

// humanBytes prints n in binary units with one decimal.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
