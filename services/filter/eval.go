package filter

import (
	"regexp"
	"strings"
)

// node evaluates a filter on r; sc is r as Scalars, nil when it is not.
type node interface {
	eval(r Record, sc Scalars) bool
}

type andNode struct{ l, r node }
type orNode struct{ l, r node }
type notNode struct{ n node }

func (n andNode) eval(r Record, sc Scalars) bool { return n.l.eval(r, sc) && n.r.eval(r, sc) }
func (n orNode) eval(r Record, sc Scalars) bool  { return n.l.eval(r, sc) || n.r.eval(r, sc) }
func (n notNode) eval(r Record, sc Scalars) bool { return !n.n.eval(r, sc) }

type cmpNode struct {
	idx  int
	f    Field
	op   string
	str  string
	num  float64
	b    bool
	null bool
	re   *regexp.Regexp
	lit  literal // a pattern with no metacharacters, matched without the regexp engine
}

// literal is a ~ pattern that needs no regexp: "^abc" is a prefix test and
// "abc" a substring test. Dialog lists scan 100 000 rows per call, and these
// two shapes are most of what people type.
type literal struct {
	set    bool
	prefix bool
	text   string
}

func literalOf(pattern string) literal {
	body, anchored := strings.CutPrefix(pattern, "^")
	if body == "" || regexp.QuoteMeta(body) != body {
		return literal{}
	}
	return literal{set: true, prefix: anchored, text: body}
}

func (n *cmpNode) match(s string) bool {
	switch {
	case !n.lit.set:
		return n.re.MatchString(s)
	case n.lit.prefix:
		return strings.HasPrefix(s, n.lit.text)
	}
	return strings.Contains(s, n.lit.text)
}

func (n *cmpNode) eval(r Record, sc Scalars) bool {
	if sc != nil && !n.f.Multi {
		switch n.f.Kind {
		case Number:
			v, null := sc.Num(n.idx)
			if n.null {
				return null == (n.op == "==")
			}
			return !null && cmpNum(v, n.op, n.num)
		case String:
			s, null := sc.Str(n.idx)
			if n.null {
				return (null || s == "") == (n.op == "==")
			}
			return !null && n.str1(s)
		}
	}
	v := r.Field(n.idx)
	if n.null {
		isNull := v.Null || (n.f.Kind == String && !n.f.Multi && v.Str == "") || (n.f.Multi && len(v.Strs) == 0)
		return isNull == (n.op == "==")
	}
	if v.Null {
		return false
	}
	switch n.f.Kind {
	case Number:
		return cmpNum(v.Num, n.op, n.num)
	case Bool:
		return (v.Bool == n.b) == (n.op == "==")
	}
	if !n.f.Multi {
		return n.str1(v.Str)
	}
	if n.op == "!=" || n.op == "!~" { // none matches the positive form
		pos := *n
		pos.op = n.op[1:]
		if pos.op == "=" {
			pos.op = "=="
		}
		for _, s := range v.Strs {
			if pos.str1(s) {
				return false
			}
		}
		return true
	}
	for _, s := range v.Strs {
		if n.str1(s) {
			return true
		}
	}
	return false
}

func (n *cmpNode) str1(s string) bool {
	switch n.op {
	case "~":
		return n.match(s)
	case "!~":
		return !n.match(s)
	case "==":
		return s == n.str
	case "!=":
		return s != n.str
	}
	c := strings.Compare(s, n.str)
	return cmpNum(float64(c), n.op, 0)
}

func cmpNum(a float64, op string, b float64) bool {
	switch op {
	case "==":
		return a == b
	case "!=":
		return a != b
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	}
	return false
}
