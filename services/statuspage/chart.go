package statuspage

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Chart geometry, in SVG user units: a phone-width plot with room for
// the axis labels on the left and the time labels below.
const (
	chartW      = 320
	chartH      = 140
	chartLeft   = 34
	chartRight  = 6
	chartTop    = 8
	chartBottom = 20
	plotW       = chartW - chartLeft - chartRight
	plotH       = chartH - chartTop - chartBottom
	// chartStep is the grid step of the load axis (25 %); the axis ends
	// at the first step above the highest peak.
	chartStep = 0.25
	// chartMaxAxis caps the axis: a load past 150 % is a clock problem,
	// and clipping it keeps the real traffic readable.
	chartMaxAxis = 1.5
)

// LoadChart draws one series as an inline SVG: the mean load per bin as
// a line, the peak one-second load as a lighter line, gaps where a bin
// has no basis. Everything in it is computed here; the port name is the
// operator's and is escaped.
func LoadChart(ls LoadSeries) string {
	top := math.Min(chartMaxAxis, math.Max(chartStep, math.Ceil(ls.PeakMax/chartStep)*chartStep))
	n := len(ls.Bins)
	x := func(i int) float64 { return chartLeft + plotW*(float64(i)+0.5)/float64(max(n, 1)) }
	y := func(v float64) float64 { return chartTop + plotH*(1-math.Min(v, top)/top) }
	var b strings.Builder
	name := html.EscapeString(ls.Port)
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="bus load of %s, last hour">`, chartW, chartH, name)
	fmt.Fprintf(&b, `<title>bus load of %s, last hour: mean (solid) and peak 1 s (dashed)</title>`, name)
	for v := 0.0; v <= top+1e-9; v += chartStep {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ccc" stroke-width="0.5"/>`, chartLeft, chartW-chartRight, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="9" text-anchor="end" fill="#555">%d%%</text>`, chartLeft-3, y(v)+3, int(math.Round(v*100)))
	}
	for _, l := range []struct {
		label string
		at    int
	}{{"-60 min", 0}, {"-30 min", n / 2}, {ls.End.Format("15:04") + " UTC", n}} {
		anchor := "middle"
		if l.at == n {
			anchor = "end"
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="9" text-anchor="%s" fill="#555">%s</text>`,
			chartLeft+plotW*float64(l.at)/float64(max(n, 1)), chartH-6, anchor, html.EscapeString(l.label))
	}
	line := func(pick func(LoadBin) *float64, attrs, color string) {
		var pts []string
		flush := func() {
			switch len(pts) {
			case 0:
			case 1: // a lone minute is a dot, not an invisible line
				xy := strings.Split(pts[0], ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="1.5" fill="%s"/>`, xy[0], xy[1], color)
			default:
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" %s points="%s"/>`, color, attrs, strings.Join(pts, " "))
			}
			pts = pts[:0]
		}
		for i, bin := range ls.Bins {
			v := pick(bin)
			if v == nil {
				flush()
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(*v)))
		}
		flush()
	}
	line(func(b LoadBin) *float64 { return b.Peak }, `stroke-width="1" stroke-dasharray="3 2"`, "#e8a33d")
	line(func(b LoadBin) *float64 { return b.Mean }, `stroke-width="1.5"`, "#1f5fa8")
	b.WriteString(`</svg>`)
	return b.String() // built from numbers and escaped text only
}
