package filter

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Kind is a field's value type.
type Kind int

// Field kinds.
const (
	String Kind = iota
	Number
	Bool
)

func (k Kind) String() string { return [...]string{"string", "number", "bool"}[k] }

// Field describes one filterable column. A Multi field holds several
// strings (a dialog's methods); a comparison matches when any one does,
// and != when none equals.
type Field struct {
	Name  string
	Kind  Kind
	Multi bool
	Doc   string
}

// Schema is the set of fields a filter may name; a Record's Field(i)
// answers for Schema[i].
type Schema []Field

// Value is one field's value in a record. Null marks "no value" (a timing
// that never happened): every comparison with it is false except == null
// and != null.
type Value struct {
	Str  string
	Strs []string
	Num  float64
	Bool bool
	Null bool
}

// Record is what a filter matches against.
type Record interface {
	Field(i int) Value
}

// Scalars is what a Record may also implement to answer a single-valued
// number or string field without a Value, with null as Field's Null: a
// Value returned through the interface is stored field by field and read
// back whole, a stall on every row of a long scan. Num and Str must
// agree with Field.
type Scalars interface {
	Num(i int) (v float64, null bool)
	Str(i int) (s string, null bool)
}

// Expr is a compiled filter; the zero Expr (from an empty source) matches
// everything. Safe for concurrent use.
type Expr struct {
	root node
	src  string
}

// String returns the source the filter was compiled from; "" for nil,
// which matches everything as the empty source does.
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	return e.src
}

// Match reports whether r satisfies the filter.
func (e *Expr) Match(r Record) bool {
	if e.MatchesAll() {
		return true
	}
	return e.root.eval(r, nil)
}

// MatchesAll reports whether the filter is empty: it matches every
// record without reading one.
func (e *Expr) MatchesAll() bool { return e == nil || e.root == nil }

// ReadsOnly reports whether every field the filter compares is one for
// which ok is true, so a caller holding those fields in a cheaper form
// than its records may evaluate the filter there. The empty filter reads
// none.
func (e *Expr) ReadsOnly(ok func(i int) bool) bool {
	if e.MatchesAll() {
		return true
	}
	return readsOnly(e.root, ok)
}

func readsOnly(n node, ok func(int) bool) bool {
	switch n := n.(type) {
	case andNode:
		return readsOnly(n.l, ok) && readsOnly(n.r, ok)
	case orNode:
		return readsOnly(n.l, ok) && readsOnly(n.r, ok)
	case notNode:
		return readsOnly(n.n, ok)
	case *cmpNode:
		return ok(n.idx)
	}
	return false
}

// MatchScalars is Match for a record that also answers as Scalars: r
// and sc are the same value, converted to the two interfaces once by a
// caller scanning many rows through one cursor.
func (e *Expr) MatchScalars(r Record, sc Scalars) bool {
	if e.MatchesAll() {
		return true
	}
	return e.root.eval(r, sc)
}

// Compile parses src against s. An empty or blank src matches everything.
func Compile(src string, s Schema) (*Expr, error) {
	if len(src) > MaxSource {
		return nil, &Error{Col: MaxSource + 1, Msg: fmt.Sprintf("filter longer than %d bytes", MaxSource), Src: src[:MaxSource]}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, src: src, schema: s}
	if toks[0].kind == tEOF {
		return &Expr{src: src}, nil
	}
	n, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.errAt(t, fmt.Sprintf("expected and, or or the end, found %q", t.text))
	}
	return &Expr{root: n, src: src}, nil
}

type parser struct {
	toks   []token
	pos    int
	src    string
	schema Schema
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) take() token { t := p.toks[p.pos]; p.pos = min(p.pos+1, len(p.toks)-1); return t }

func (p *parser) errAt(t token, msg string) error { return &Error{Col: t.col, Msg: msg, Src: p.src} }

func isKeyword(t token, kw string) bool { return t.kind == tIdent && strings.EqualFold(t.text, kw) }

func (p *parser) or(depth int) (node, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for isKeyword(p.peek(), "or") {
		p.take()
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = orNode{l, r}
	}
	return l, nil
}

func (p *parser) and(depth int) (node, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for isKeyword(p.peek(), "and") {
		p.take()
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = andNode{l, r}
	}
	return l, nil
}

func (p *parser) unary(depth int) (node, error) {
	t := p.peek()
	if depth > MaxDepth {
		return nil, p.errAt(t, fmt.Sprintf("nested deeper than %d", MaxDepth))
	}
	if isKeyword(t, "not") {
		p.take()
		n, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return notNode{n}, nil
	}
	if t.kind == tLParen {
		p.take()
		n, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if c := p.take(); c.kind != tRParen {
			return nil, p.errAt(c, "expected )")
		}
		return n, nil
	}
	return p.comparison()
}

func (p *parser) field(t token) (int, Field, error) {
	if t.kind != tIdent {
		return 0, Field{}, p.errAt(t, fmt.Sprintf("expected a field name, found %q", t.text))
	}
	for i, f := range p.schema {
		if f.Name == t.text {
			return i, f, nil
		}
	}
	names := make([]string, len(p.schema))
	for i, f := range p.schema {
		names[i] = f.Name
	}
	slices.Sort(names)
	return 0, Field{}, p.errAt(t, fmt.Sprintf("unknown field %q (fields: %s)", t.text, strings.Join(names, ", ")))
}

func (p *parser) comparison() (node, error) {
	ft := p.take()
	idx, f, err := p.field(ft)
	if err != nil {
		return nil, err
	}
	opT := p.peek()
	if opT.kind != tOp {
		if f.Kind == Bool { // a bare bool field means field == true
			return &cmpNode{idx: idx, f: f, op: "==", b: true}, nil
		}
		return nil, p.errAt(opT, fmt.Sprintf("expected an operator after %s (==, !=, <, <=, >, >=, ~, !~)", f.Name))
	}
	p.take()
	vt := p.take()
	n := &cmpNode{idx: idx, f: f, op: opT.text}
	if vt.kind == tIdent && strings.EqualFold(vt.text, "null") {
		if n.op != "==" && n.op != "!=" {
			return nil, p.errAt(vt, "null compares only with == or !=")
		}
		n.null = true
		return n, nil
	}
	switch n.op {
	case "~", "!~":
		if f.Kind != String {
			return nil, p.errAt(opT, fmt.Sprintf("%s is a %s; ~ needs a string field", f.Name, f.Kind))
		}
		if vt.kind != tString && vt.kind != tIdent && vt.kind != tNumber {
			return nil, p.errAt(vt, "expected a pattern")
		}
		if len(vt.text) > MaxPattern {
			return nil, p.errAt(vt, fmt.Sprintf("pattern longer than %d bytes", MaxPattern))
		}
		re, err := regexp.Compile(vt.text)
		if err != nil {
			return nil, p.errAt(vt, "bad pattern: "+err.Error())
		}
		n.re, n.lit = re, literalOf(vt.text)
		return n, nil
	}
	switch f.Kind {
	case Number:
		if vt.kind != tNumber {
			return nil, p.errAt(vt, fmt.Sprintf("%s is a number; found %q", f.Name, vt.text))
		}
		v, err := strconv.ParseFloat(vt.text, 64)
		if err != nil {
			return nil, p.errAt(vt, fmt.Sprintf("bad number %q", vt.text))
		}
		n.num = v
	case Bool:
		if n.op != "==" && n.op != "!=" {
			return nil, p.errAt(opT, fmt.Sprintf("%s is a bool; use == or !=", f.Name))
		}
		switch {
		case isKeyword(vt, "true"):
			n.b = true
		case isKeyword(vt, "false"):
		default:
			return nil, p.errAt(vt, fmt.Sprintf("%s is a bool; found %q", f.Name, vt.text))
		}
	case String:
		if vt.kind != tString && vt.kind != tIdent && vt.kind != tNumber {
			return nil, p.errAt(vt, fmt.Sprintf("expected a value for %s", f.Name))
		}
		n.str = vt.text
	}
	return n, nil
}
