package mcp

import (
	"errors"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/canre"
)

// canreTools is the canre bundle: reverse-engineering helpers for one CAN
// id over a window of a port's stored frames (services/canre,
// docs/can-reverse-engineering.md). Each answer names its method.
var canreTools = []toolDef{canREAnalyse, canRECorrelate}

// The analyses can_re_analyse runs.
const (
	reCounters  = "counters"
	reChecksums = "checksums"
	reEntropy   = "entropy"
	reSignals   = "signals"
)

var reAnalyses = []string{reCounters, reChecksums, reEntropy, reSignals, reMarks}

type reAnalysisArg string

func (reAnalysisArg) argSchema() *jsonschema.Schema {
	return enumArg("one analysis", reAnalyses)
}

type reIDIn struct {
	ID       canIDArg        `json:"id"`
	Analyses []reAnalysisArg `json:"analyses,omitempty" jsonschema:"which analyses to run; default the first four (marks only when named)"`
	NearMS   *nearMSArg      `json:"near_ms,omitempty"`
	PortSelector
	window
}

// reSeriesOut is what every analysis read.
type reSeriesOut struct {
	Port   string `json:"port"`
	ID     string `json:"id"`
	Frames int    `json:"frames"`
	// DLC is the smallest length seen: only the bytes every frame has
	// are read; longer_frames counts the frames with more.
	DLC       int  `json:"dlc"`
	Longer    int  `json:"longer_frames"`
	Truncated bool `json:"frames_truncated"` // over canre.MaxFrames: the oldest were read
}

type reIDOut struct {
	reSeriesOut
	Counters  *reCountersRow  `json:"counters"`
	Checksums *reChecksumsRow `json:"checksums"`
	Entropy   *reEntropyRow   `json:"entropy"`
	Signals   *reSignalsRow   `json:"signals"`
	Marks     *reMarksRow     `json:"marks"`
}

// reOnePort resolves the port argument to one CAN port.
func reOnePort(c *call, sel PortSelector) (*canbus.Port, error) {
	ps, err := canPorts(c.d, sel)
	if err != nil {
		return nil, err
	}
	if len(ps) != 1 {
		names := make([]string, len(ps))
		for i, p := range ps {
			names[i] = p.Name()
		}
		return nil, argErr("port", "name one CAN port", "this box has %d CAN ports (%v): name one", len(ps), names)
	}
	return ps[0], nil
}

// reID parses an id argument as can_frames spells ids.
func reID(s canIDArg) uint32 {
	v := hexValue(string(s))
	if len(s) > 3 {
		v |= wire.CANEFF
	}
	return v
}

// reSeries collects one id's frames, refusing a window with too few.
func reSeries(c *call, p *canbus.Port, arg string, id canIDArg, sp span) (*canre.Series, error) {
	s, err := canre.Frames(p.Frames(), reID(id), canre.Window{Since: sp.since, Until: sp.until})
	if errors.Is(err, canre.ErrFewFrames) {
		return nil, notFound("can_ids lists the ids of a port with their frame counts; widen since/until", "%s: %v (at least %d are needed)", arg, err, canre.MinFrames)
	}
	if err != nil {
		return nil, err
	}
	if s.Truncated {
		c.warnf("%s %s has more than %d frames in the window: the analysis read the oldest %d; narrow since/until", arg, s.IDHex, canre.MaxFrames, canre.MaxFrames)
	}
	return s, nil
}

func reSeriesOf(port string, s *canre.Series) reSeriesOut {
	return reSeriesOut{Port: port, ID: s.IDHex, Frames: s.Len(), DLC: s.DLC, Longer: s.Longer, Truncated: s.Truncated}
}

var canREAnalyse = tool[reIDIn, reIDOut]{
	name:  "can_re_analyse",
	reads: readsCAN,
	desc: "Reverse-engineering helpers for one CAN id over a window of a port's stored frames: rolling counters, checksum candidates (XOR, sums, three CRC-8s over the other bytes), per-bit and per-byte entropy with flip counts, " +
		"signal candidates from bit-flip boundaries (READ), both byte orders, and (marks, when named) bits and bytes ranked by how they change near marks. Each names its method and bound; fields in DBC numbering.",
	hints: readOnly(),
	run: func(c *call, in reIDIn) (reIDOut, error) {
		p, err := reOnePort(c, in.PortSelector)
		if err != nil {
			return reIDOut{}, err
		}
		sp, err := in.span()
		if err != nil {
			return reIDOut{}, err
		}
		s, err := reSeries(c, p, "id", in.ID, sp)
		if err != nil {
			return reIDOut{}, err
		}
		want := func(a string) bool {
			return len(in.Analyses) == 0 && a != reMarks || slices.Contains(in.Analyses, reAnalysisArg(a))
		}
		out := reIDOut{reSeriesOut: reSeriesOf(p.Name(), s)}
		if want(reCounters) {
			v := reCountersRowOf(canre.FindCounters(s))
			out.Counters = &v
		}
		if want(reChecksums) {
			v := reChecksumsRowOf(canre.FindChecksums(s))
			out.Checksums = &v
		}
		if want(reEntropy) {
			v := reEntropyRowOf(canre.EntropyOf(s))
			out.Entropy = &v
		}
		if want(reSignals) {
			v := reSignalsRowOf(canre.FindSignals(s))
			out.Signals = &v
		}
		if want(reMarks) {
			if out.Marks, err = reMarksOf(c, s, in.NearMS); err != nil {
				return reIDOut{}, err
			}
		}
		return out, nil
	},
}

// reFieldArg is one candidate field to test.
type reFieldArg struct {
	StartBit  int  `json:"start_bit" jsonschema:"DBC numbering: little-endian LSB (byte·8 + bit), big-endian MSB; 0 to 63"`
	Length    int  `json:"length" jsonschema:"bits, 1 to 64"`
	BigEndian bool `json:"big_endian,omitempty" jsonschema:"Motorola byte order"`
	Signed    bool `json:"signed,omitempty"`
}

// reFields is can_re_correlate's candidates, up to canre.MaxFields (not
// "fields": that name is every list tool's projection).
type reFields []reFieldArg

func (reFields) argSchema() *jsonschema.Schema {
	zero, maxBit, one, maxLen, hi := 0.0, 63.0, 1.0, 64.0, canre.MaxFields
	item := &jsonschema.Schema{Type: "object", Required: []string{"start_bit", "length"}, Properties: map[string]*jsonschema.Schema{
		"start_bit":  {Type: "integer", Minimum: &zero, Maximum: &maxBit, Description: "DBC numbering: little-endian LSB (byte·8 + bit), big-endian MSB"},
		"length":     {Type: "integer", Minimum: &one, Maximum: &maxLen, Description: "bits"},
		"big_endian": {Type: "boolean", Description: "Motorola byte order"},
		"signed":     {Type: "boolean"},
	}}
	return &jsonschema.Schema{Type: "array", Items: item, MaxItems: &hi,
		Description: "fields of id to test; default every signal candidate of both byte orders, every byte and every 16-bit word at a byte boundary"}
}

type reCorrelateIn struct {
	ID     canIDArg       `json:"id"`
	Fields reFields       `json:"candidates,omitempty"`
	SPN    *spnArg        `json:"spn,omitempty" jsonschema:"reference: this J1939 SPN decoded from the same window (the catalogue: built-in and loaded J1939 DBCs); give spn or ref_id"`
	SA     *sourceAddress `json:"sa,omitempty" jsonschema:"with spn: only this source's values"`
	RefID  canIDArg       `json:"ref_id,omitempty" jsonschema:"reference: a field of this other hex CAN id (raw values); with ref_start_bit and ref_length"`
	RefBit *int           `json:"ref_start_bit,omitempty" jsonschema:"the reference field's start bit (DBC numbering, little-endian)"`
	RefLen *int           `json:"ref_length,omitempty" jsonschema:"the reference field's length in bits"`
	PortSelector
	window
}

type reCorrelateOut struct {
	Series reSeriesOut `json:"series"`
	reCorrelationsRow
}

var canRECorrelate = tool[reCorrelateIn, reCorrelateOut]{
	name:  "can_re_correlate",
	reads: readsCAN | readsJ1939,
	desc: "Rank fields of one CAN id by how well they follow a reference over a window: a J1939 SPN (spn, optionally sa) or a field of another id (ref_id, ref_start_bit, ref_length). " +
		"Pearson r with zero-order hold (1 s), and the least-squares slope and intercept to try as a DBC factor and offset; strongest first, 32 listed.",
	hints: readOnly(),
	run: func(c *call, in reCorrelateIn) (reCorrelateOut, error) {
		p, err := reOnePort(c, in.PortSelector)
		if err != nil {
			return reCorrelateOut{}, err
		}
		sp, err := in.span()
		if err != nil {
			return reCorrelateOut{}, err
		}
		if (in.SPN == nil) == (in.RefID == "") {
			return reCorrelateOut{}, argErr("spn", "pass spn (a J1939 SPN) or ref_id with ref_start_bit and ref_length", "give exactly one reference: spn or ref_id")
		}
		s, err := reSeries(c, p, "id", in.ID, sp)
		if err != nil {
			return reCorrelateOut{}, err
		}
		w := canre.Window{Since: sp.since, Until: sp.until}
		var ref canre.Reference
		if in.SPN != nil {
			param, err := j1939Param(c.d, *in.SPN)
			if err != nil {
				return reCorrelateOut{}, err
			}
			var sa *uint8
			if in.SA != nil {
				v := uint8(*in.SA)
				sa = &v
			}
			if ref, err = canre.ReferenceFromSPN(p.Frames(), w, param.SPN, sa, c.d.J1939.Catalogue()); err != nil {
				return reCorrelateOut{}, notFound("j1939_spn_history shows which sources send the SPN in the window", "spn: %v", err)
			}
		} else {
			if in.RefBit == nil || in.RefLen == nil {
				return reCorrelateOut{}, argErr("ref_start_bit", "give ref_start_bit and ref_length with ref_id", "ref_id needs ref_start_bit and ref_length")
			}
			rs, err := reSeries(c, p, "ref_id", in.RefID, sp)
			if err != nil {
				return reCorrelateOut{}, err
			}
			if ref, err = canre.ReferenceFromField(rs, canre.Field{StartBit: *in.RefBit, Length: *in.RefLen}); err != nil {
				return reCorrelateOut{}, argErr("ref_start_bit", "the field must lie inside the bytes every frame of ref_id has", "%v", err)
			}
		}
		var fields []canre.Field
		for _, f := range in.Fields {
			fields = append(fields, canre.Field{StartBit: f.StartBit, Length: f.Length, BigEndian: f.BigEndian, Signed: f.Signed})
		}
		cor, err := canre.Correlate(s, fields, ref)
		if err != nil {
			return reCorrelateOut{}, argErr("candidates", "each field must lie inside the bytes every frame of id has (dlc)", "%v", err)
		}
		if cor.Truncated {
			c.warnf("listed the %d strongest of %d fields tested", len(cor.Results), cor.Tested)
		}
		return reCorrelateOut{Series: reSeriesOf(p.Name(), s), reCorrelationsRow: reCorrelationsRowOf(cor)}, nil
	},
}
