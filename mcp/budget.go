package mcp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Response byte budget (--mcp-max-response-bytes). The budget counts the
// envelope's JSON once; the wire carries it twice (text block and
// structuredContent), so a client's context pays about double.
const (
	// DefaultMaxResponseBytes holds a default page of any list tool many
	// times over (a CAN frame row is ~150 bytes), while one answer cannot
	// fill a model's context; sipnab measured its largest real answer at
	// about half of it (seed 000).
	DefaultMaxResponseBytes = 1 << 20
	// MinMaxResponseBytes: below this not even a failure with its hint fits.
	MinMaxResponseBytes = 1024
	// budgetHeadroom aims a suggested narrower request at 90 % of the
	// budget, since rows differ in size.
	budgetHeadroom = 0.9
)

// sizeKnobs are the arguments that bound how many rows or lines an answer
// holds, in the order a suggestion prefers them.
var sizeKnobs = []string{"limit", "max_messages", "max_lines"}

// tooLarge refuses an answer over maxBytes with RESPONSE_TOO_LARGE, its
// size, and a concrete narrower request; nothing is ever cut silently.
func tooLarge(ti toolInfo, size, maxBytes int, body []byte, args map[string]any) error {
	has := map[string]bool{}
	for _, n := range ti.input().names() {
		has[n] = true
	}
	return &toolError{ErrorInfo{
		Code:      CodeResponseTooLarge,
		Message:   fmt.Sprintf("the answer of %s would be %d bytes, over the %d-byte response budget", ti.name, size, maxBytes),
		Hint:      narrower(ti.name, size, maxBytes, body, args, has),
		SizeBytes: size,
		MaxBytes:  maxBytes,
	}}
}

// narrower suggests a request that fits: the size knob scaled to the
// budget, then fields and time windows where the tool has them.
func narrower(tool string, size, maxBytes int, body []byte, args map[string]any, has map[string]bool) string {
	var out []string
	for _, knob := range sizeKnobs {
		if !has[knob] {
			continue
		}
		n := rowsOf(body, args, knob)
		if n > 1 {
			k := max(1, int(float64(n)*float64(maxBytes)/float64(size)*budgetHeadroom))
			hint := fmt.Sprintf("call %s again with %s: %d", tool, knob, k)
			if knob == "limit" {
				hint += " and follow next_cursor"
			}
			out = append(out, hint)
			break
		}
	}
	if has["fields"] {
		out = append(out, "pass fields to return only the columns you need")
	}
	if has["since"] || has["until"] {
		out = append(out, "narrow since/until")
	}
	if len(out) == 0 {
		out = append(out, "narrow the request's filters")
	}
	return strings.Join(out, "; or ")
}

// rowsOf finds how many rows the refused answer held: page.returned for a
// list, else the knob's value in the arguments, else data.messages/lines.
func rowsOf(body []byte, args map[string]any, knob string) int {
	var env struct {
		Page *struct {
			Returned int `json:"returned"`
		} `json:"page"`
		Data struct {
			Messages int `json:"messages"`
			Lines    int `json:"lines"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &env)
	if knob == "limit" && env.Page != nil {
		return env.Page.Returned
	}
	if v, isNum := args[knob].(float64); isNum && v > 0 {
		return int(v)
	}
	return max(env.Data.Messages, env.Data.Lines)
}

// BudgetCut says a page was cut to fit the response byte budget: how many
// of the rows the page would have held were left out, and, for each
// column the caller asked for in fields, how those rows count by value,
// so one answer tells what a smaller page would have shown and what it
// left for next_cursor.
type BudgetCut struct {
	RowsLeftOut int            `json:"rows_left_out"`
	Counts      []ColumnCounts `json:"counts,omitempty"`
}

// ColumnCounts counts the rows left out by one column's values, most
// frequent first, at most maxCutValues values; the rest are other_rows.
type ColumnCounts struct {
	Column    string       `json:"column"`
	Values    []ValueCount `json:"values"`
	OtherRows int          `json:"other_rows"`
}

// ValueCount is one value of a column (as the rows carry it: sender text
// stays fenced) and how many rows left out hold it.
type ValueCount struct {
	Value cutValue `json:"value"`
	Rows  int      `json:"rows"`
}

// cutValue is a column's value as the rows carry it: its JSON, written
// back as it was (a 64-bit id stays exact, sender text stays fenced).
type cutValue json.RawMessage

func (v cutValue) MarshalJSON() ([]byte, error) { return v, nil }

const (
	// maxCutValues bounds the values counted per column; the rest are
	// counted together as other_rows.
	maxCutValues = 20
	// maxCutValueBytes: a value longer than this (a body, a list) is not
	// a useful bucket and is counted in other_rows.
	maxCutValueBytes = 128
)

// cutEnvelope is a list envelope with its rows and blocks kept as
// encoded, so a cut re-encodes only the page.
type cutEnvelope struct {
	OK       bool              `json:"ok"`
	Items    []json.RawMessage `json:"items"`
	Page     Page              `json:"page"`
	Source   json.RawMessage   `json:"source"`
	Coverage json.RawMessage   `json:"coverage,omitempty"`
	Warnings []string          `json:"warnings"`
	Errors   json.RawMessage   `json:"errors"`
}

// cutToBudget degrades a list answer over the budget to the largest first
// part of its page that fits: the page is marked truncated, its cursor
// names the first row left out, and budget_cut counts the rows left out
// by the columns asked for. It reports false when out is not a page the
// pager built or not even its first row fits: a single item that cannot
// be cut stays RESPONSE_TOO_LARGE.
func cutToBudget(c *call, out any, body []byte, maxBytes int, fields []string) ([]byte, bool) {
	pk, isPage := out.(interface{ pageKeys() []rowKey })
	if !isPage {
		return nil, false
	}
	keys := pk.pageKeys()
	var env cutEnvelope
	if keys == nil || json.Unmarshal(body, &env) != nil || len(env.Items) != len(keys) || len(keys) == 0 {
		return nil, false
	}
	rows := make([]map[string]json.RawMessage, len(env.Items))
	for i, it := range env.Items {
		if json.Unmarshal(it, &rows[i]) != nil {
			return nil, false
		}
	}
	all, warnings := env.Items, env.Warnings
	encode := func(n int) []byte {
		env.Items = all[:n]
		env.Page.Returned = n
		env.Page.Truncated = true
		env.Page.NextCursor = encodeCursor(c.req.Params.Name, c.src.CaptureIdentity, keys[n])
		env.Page.BudgetCut = &BudgetCut{RowsLeftOut: len(all) - n, Counts: countColumns(rows[n:], fields)}
		env.Warnings = append(slices.Clone(warnings), fmt.Sprintf(
			"the page was cut to %d of %d rows to fit the %d-byte response budget; follow next_cursor for the rest", n, len(all), maxBytes))
		b, err := json.Marshal(env)
		if err != nil {
			return nil
		}
		return roundFloats(b)
	}
	// The largest n below the page's rows whose answer fits; sizes grow
	// with n, less the count buckets its rows leave.
	lo, hi := 0, len(all)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if b := encode(mid); b != nil && len(b) <= maxBytes {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		return nil, false
	}
	b := encode(lo)
	return b, b != nil && len(b) <= maxBytes
}

// countColumns counts rows by each asked column's values, most frequent
// first (ties in first-seen order), bounded by maxCutValues.
func countColumns(rows []map[string]json.RawMessage, fields []string) []ColumnCounts {
	var out []ColumnCounts
	for _, f := range fields {
		cc := ColumnCounts{Column: f, Values: []ValueCount{}}
		at := map[string]int{}
		var order []string
		for _, r := range rows {
			v, has := r[f]
			if !has || len(v) > maxCutValueBytes {
				cc.OtherRows++
				continue
			}
			k := string(v)
			if _, seen := at[k]; !seen {
				order = append(order, k)
			}
			at[k]++
		}
		slices.SortStableFunc(order, func(a, b string) int { return at[b] - at[a] })
		for i, k := range order {
			if i >= maxCutValues {
				cc.OtherRows += at[k]
				continue
			}
			cc.Values = append(cc.Values, ValueCount{Value: cutValue(k), Rows: at[k]})
		}
		out = append(out, cc)
	}
	return out
}
