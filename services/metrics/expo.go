package metrics

import (
	"cmp"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The endpoint writes the Prometheus text exposition format 0.0.4 itself
// rather than through the client library: the library and the protobuf
// runtime it brings cost the arm64 daemon about 2.3 MB, and the box
// exports only counters, gauges and one summary.

// contentType is what Prometheus expects for format 0.0.4.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// Metric types of the TYPE line.
const (
	typeCounter = "counter"
	typeGauge   = "gauge"
	typeSummary = "summary"
)

// metricDesc is one family: its name, HELP text and label names.
type metricDesc struct {
	name, help string
	labels     []string
}

// exposition gathers one scrape's families, then writes them sorted by
// name, as the client library did.
type exposition struct {
	fams map[string]*family
}

type family struct {
	help, typ string
	samples   []sample
}

// sample is one line: suffix is added to the family name (_sum, _count
// of a summary), pairs are label name, value, already sorted by name.
type sample struct {
	suffix string
	pairs  []string
	value  float64
}

func newExposition() *exposition { return &exposition{fams: map[string]*family{}} }

// add is one sample of d with its label values in d's label order.
func (e *exposition) add(d *metricDesc, typ string, v float64, values ...string) {
	pairs := make([]string, 0, 2*len(d.labels))
	for i, l := range d.labels {
		pairs = append(pairs, l, values[i])
	}
	e.addPairs(d.name, d.help, typ, "", v, pairs...)
}

// addPairs is one sample of family name; pairs are label name, value.
func (e *exposition) addPairs(name, help, typ, suffix string, v float64, pairs ...string) {
	f := e.fams[name]
	if f == nil {
		f = &family{help: help, typ: typ}
		e.fams[name] = f
	}
	sortPairs(pairs)
	f.samples = append(f.samples, sample{suffix: suffix, pairs: pairs, value: v})
}

// sortPairs orders name, value pairs by name.
func sortPairs(p []string) {
	type kv struct{ k, v string }
	kvs := make([]kv, len(p)/2)
	for i := range kvs {
		kvs[i] = kv{p[2*i], p[2*i+1]}
	}
	slices.SortFunc(kvs, func(a, b kv) int { return cmp.Compare(a.k, b.k) })
	for i, x := range kvs {
		p[2*i], p[2*i+1] = x.k, x.v
	}
}

// write prints every family in name order; within a family the samples
// are ordered by their label values, except a summary's, whose quantile
// lines come in the order added and _sum and _count after them.
func (e *exposition) write(w io.Writer) error {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(e.fams)) {
		f := e.fams[name]
		if f.typ != typeSummary {
			slices.SortStableFunc(f.samples, func(a, c sample) int {
				for i := 1; i < len(a.pairs) && i < len(c.pairs); i += 2 {
					if r := cmp.Compare(a.pairs[i], c.pairs[i]); r != 0 {
						return r
					}
				}
				return cmp.Compare(len(a.pairs), len(c.pairs))
			})
		}
		b.WriteString("# HELP " + name + " " + escapeHelp(f.help) + "\n# TYPE " + name + " " + f.typ + "\n")
		for _, s := range f.samples {
			b.WriteString(name + s.suffix)
			if len(s.pairs) > 0 {
				b.WriteByte('{')
				for i := 0; i < len(s.pairs); i += 2 {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(s.pairs[i] + `="` + escapeLabel(s.pairs[i+1]) + `"`)
				}
				b.WriteByte('}')
			}
			b.WriteString(" " + formatFloat(s.value) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeHelp escapes a HELP text: backslash and newline.
var escapeHelp = strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace

// escapeLabel escapes a label value: backslash, double quote, newline.
var escapeLabel = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace

// formatFloat prints v as the format wants: shortest round-trip digits,
// +Inf, -Inf and NaN spelled out.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
