package mcp

import (
	"encoding/json"
	"fmt"
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
	for _, n := range ti.input.names() {
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
