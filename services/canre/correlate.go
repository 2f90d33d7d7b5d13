package canre

import (
	"fmt"
	"math"
	"slices"
	"time"

	"fieldtap/services/canbus"
	"fieldtap/services/j1939"
	"fieldtap/services/ring"
)

// Correlation bounds and method.
const (
	// CorrelationMethod names the measure: Pearson's r between a field's
	// raw value in each frame and the reference's last value at or before
	// that frame, with the least-squares line reference = slope·raw +
	// intercept (a factor and offset to try in a DBC).
	CorrelationMethod = "pearson_r_zero_order_hold"
	// MaxHold is how old a reference value may be and still pair with a
	// frame: periodic J1939 values repeat within 1 s.
	MaxHold = time.Second
	// MinPairs is the fewest pairs a coefficient is given for.
	MinPairs = 8
	// MaxCorrelations bounds the results listed, strongest first.
	MaxCorrelations = 32
	// MaxFields bounds the fields one call tests.
	MaxFields = 512
)

// Reference is a signal to compare candidates with: times and values,
// oldest first.
type Reference struct {
	Name   string
	Times  []time.Time
	Values []float64
}

// ReferenceFromField is a field of another id's series (raw values).
func ReferenceFromField(s *Series, f Field) (Reference, error) {
	if err := f.check(s.DLC); err != nil {
		return Reference{}, err
	}
	r := Reference{Name: fmt.Sprintf("%s bit %d length %d", s.IDHex, f.StartBit, f.Length), Times: s.Times, Values: make([]float64, s.Len())}
	for i := range s.Data {
		r.Values[i] = float64(s.raw(i, f))
	}
	return r, nil
}

// ReferenceFromSPN is a J1939 SPN decoded from the same window of the
// port's frames with the catalogue (nil: the built-in table); sa limits
// it to one source.
func ReferenceFromSPN(snap ring.Snapshot[canbus.Record], w Window, spn uint32, sa *uint8, cat *j1939.Catalogue) (Reference, error) {
	pts, p, _, err := j1939.SPNSeries(snap, j1939.HistoryQuery{SPN: spn, SA: sa, Window: j1939.Window{Since: w.Since, Until: w.Until}}, cat)
	if err != nil {
		return Reference{}, err
	}
	r := Reference{Name: fmt.Sprintf("SPN %d %s", spn, p.Name)}
	for _, pt := range pts {
		r.Times = append(r.Times, pt.Time)
		r.Values = append(r.Values, pt.Value)
	}
	return r, nil
}

// Correlation is one field against the reference.
type Correlation struct {
	Field Field
	Pairs int
	// R, Slope and Intercept are nil with Reason when the pairs are too
	// few or either side never varies.
	R         *float64
	Slope     *float64
	Intercept *float64
	Reason    string
}

// Correlations rank fields by how well they follow a reference.
type Correlations struct {
	Method     string
	Reference  string
	MaxHoldSec float64
	Tested     int
	Results    []Correlation
	Truncated  bool
}

// Correlate tests each field (nil: every signal candidate of both byte
// orders, every byte, and every 16-bit word at a byte boundary in both
// orders) against ref and lists the strongest |r| first.
func Correlate(s *Series, fields []Field, ref Reference) (Correlations, error) {
	if fields == nil {
		fields = defaultFields(s)
	}
	if len(fields) > MaxFields {
		return Correlations{}, fmt.Errorf("canre: %d fields: at most %d", len(fields), MaxFields)
	}
	for _, f := range fields {
		if err := f.check(s.DLC); err != nil {
			return Correlations{}, err
		}
	}
	out := Correlations{Method: CorrelationMethod, Reference: ref.Name, MaxHoldSec: MaxHold.Seconds(), Tested: len(fields), Results: []Correlation{}}
	// Pair each frame with the reference's last value at or before it.
	held := make([]float64, s.Len())
	ok := make([]bool, s.Len())
	j := -1
	for i, t := range s.Times {
		for j+1 < len(ref.Times) && !ref.Times[j+1].After(t) {
			j++
		}
		if j >= 0 && t.Sub(ref.Times[j]) <= MaxHold {
			held[i], ok[i] = ref.Values[j], true
		}
	}
	for _, f := range fields {
		out.Results = append(out.Results, pearson(s, f, held, ok))
	}
	slices.SortStableFunc(out.Results, func(a, b Correlation) int {
		switch {
		case a.R == nil && b.R == nil:
			return 0
		case a.R == nil:
			return 1
		case b.R == nil:
			return -1
		}
		return cmpFloat(math.Abs(*b.R), math.Abs(*a.R))
	})
	if len(out.Results) > MaxCorrelations {
		out.Results, out.Truncated = out.Results[:MaxCorrelations], true
	}
	return out, nil
}

func pearson(s *Series, f Field, held []float64, ok []bool) Correlation {
	c := Correlation{Field: f}
	var sx, sy float64
	for i := range s.Data {
		if ok[i] {
			c.Pairs++
			sx += float64(s.raw(i, f))
			sy += held[i]
		}
	}
	if c.Pairs < MinPairs {
		c.Reason = fmt.Sprintf("%d frames have a reference value at most %v old, at least %d needed", c.Pairs, MaxHold, MinPairs)
		return c
	}
	n := float64(c.Pairs)
	mx, my := sx/n, sy/n
	var sxy, sxx, syy float64
	for i := range s.Data {
		if ok[i] {
			dx, dy := float64(s.raw(i, f))-mx, held[i]-my
			sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
		}
	}
	if sxx == 0 || syy == 0 {
		c.Reason = "the field or the reference never varies over the pairs"
		return c
	}
	r, slope := sxy/math.Sqrt(sxx*syy), sxy/sxx
	intercept := my - slope*mx
	r, slope, intercept = round(r), roundSig(slope), roundSig(intercept)
	c.R, c.Slope, c.Intercept = &r, &slope, &intercept
	return c
}

// roundSig keeps 9 significant digits: a fitted factor means nothing finer.
func roundSig(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	scale := math.Pow(10, 8-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*scale) / scale
}

func defaultFields(s *Series) []Field {
	var out []Field
	add := func(f Field) {
		if f.check(s.DLC) == nil && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	sig := FindSignals(s)
	for _, c := range slices.Concat(sig.LittleEndian, sig.BigEndian) {
		if c.Field.Length > 1 {
			add(c.Field)
		}
	}
	for k := range s.DLC {
		add(Field{StartBit: 8 * k, Length: 8})
		add(Field{StartBit: 8 * k, Length: 16})
		add(Field{StartBit: 8*k + 7, Length: 16, BigEndian: true})
	}
	return out
}
