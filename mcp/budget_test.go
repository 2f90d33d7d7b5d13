package mcp

import (
	"fmt"
	"strings"
	"testing"

	"fieldtap/mcp/untrusted"
)

// wideList pages n rows of about padBytes each; who takes one of three
// sender texts so counts have buckets.
func wideList(n, padBytes int) tool[synthIn, page[synthRow]] {
	return tool[synthIn, page[synthRow]]{
		name: "synth", desc: "synthetic rows", hints: readOnly(), ids: []string{"id"},
		run: func(c *call, in synthIn) (page[synthRow], error) {
			rows := make([]synthRow, n)
			for i := range rows {
				rows[i] = synthRow{ID: uint64(i), Name: fmt.Sprint("row", i), Pad: strings.Repeat("x", padBytes),
					Who: untrusted.Text([]string{"alice", "bob", "carol"}[i%3])}
			}
			return pageSlice(c, in.Paging, rows, func(r synthRow) rowKey { return rowKey{r.ID / 2, r.ID % 2} })
		},
	}
}

// TestBudgetCutsAPageAndItsCursorContinues: a page over the budget comes
// back as the largest first part that fits, truncated, with a cursor;
// following the cursors sees every row exactly once; budget_cut counts
// the rows left out by the asked columns; every answer matches the
// schema.
func TestBudgetCutsAPageAndItsCursorContinues(t *testing.T) {
	const budgetBytes, rows = 4096, 200
	s := build(testDeps(), Options{MaxResponseBytes: budgetBytes, OutputSchemas: true}, []toolDef{wideList(rows, 100)}, false)
	v := newOutputValidator()
	schema := listTools(t, s)[0].Output
	seen := map[float64]int{}
	cursor, pages, cut := "", 0, 0
	for {
		args := map[string]any{"limit": 100, "fields": []any{"who", "pad"}}
		if cursor != "" {
			args["cursor"] = cursor
		}
		r, env := callTool(t, s, "synth", args)
		if r.IsError {
			t.Fatalf("page %d refused: %s", pages, r.Content[0].Text)
		}
		v.validate(t, "synth", schema, r.StructuredContent)
		if n := len(r.Content[0].Text); n > budgetBytes {
			t.Fatalf("page %d is %d bytes, over %d", pages, n, budgetBytes)
		}
		pages++
		items := env["items"].([]any)
		for _, it := range items {
			seen[it.(map[string]any)["id"].(float64)]++
		}
		pg := env["page"].(map[string]any)
		if int(pg["returned"].(float64)) != len(items) || pg["total_matched"].(float64) != rows {
			t.Errorf("page %d: %v with %d items", pages, pg, len(items))
		}
		if bc, has := pg["budget_cut"].(map[string]any); has {
			cut++
			left := int(bc["rows_left_out"].(float64))
			if !pg["truncated"].(bool) || left < 1 || len(items)+left > 100 {
				t.Errorf("page %d: %v", pages, pg)
			}
			counts := bc["counts"].([]any)
			if len(counts) != 2 {
				t.Fatalf("counts by %d columns, want who and pad: %v", len(counts), counts)
			}
			for _, c := range counts {
				cc := c.(map[string]any)
				sum := int(cc["other_rows"].(float64))
				for _, vc := range cc["values"].([]any) {
					sum += int(vc.(map[string]any)["rows"].(float64))
				}
				if sum != left {
					t.Errorf("column %v counts %d rows, %d were left out", cc["column"], sum, left)
				}
				if cc["column"] == "who" {
					for _, vc := range cc["values"].([]any) {
						if w := vc.(map[string]any)["value"].(string); !strings.HasPrefix(w, untrusted.Open) {
							t.Errorf("who value %q is not fenced", w)
						}
					}
				}
			}
			if !strings.Contains(strings.Join(anyStrings(env["warnings"]), " "), "cut to") {
				t.Errorf("a cut page does not say so: %v", env["warnings"])
			}
		}
		next, _ := pg["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
		if pages > rows {
			t.Fatal("paging does not end")
		}
	}
	if cut == 0 {
		t.Fatal("no page was cut: the test does not exercise the budget")
	}
	for i := range rows {
		if seen[float64(i)] != 1 {
			t.Errorf("row %d seen %d times", i, seen[float64(i)])
		}
	}
	t.Logf("%d rows in %d pages, %d cut to the %d-byte budget", rows, pages, cut, budgetBytes)
}

// TestBudgetRefusesASingleItemThatCannotBeCut: when not even the first
// row fits, the answer is RESPONSE_TOO_LARGE with its size.
func TestBudgetRefusesASingleItemThatCannotBeCut(t *testing.T) {
	const budgetBytes = 4096
	s := build(testDeps(), Options{MaxResponseBytes: budgetBytes}, []toolDef{wideList(3, 5000)}, false)
	r, env := callTool(t, s, "synth", map[string]any{})
	if !r.IsError {
		t.Fatalf("a 5000-byte row passed a %d-byte budget", budgetBytes)
	}
	e := env["errors"].([]any)[0].(map[string]any)
	if e["code"] != CodeResponseTooLarge || e["max_bytes"] != float64(budgetBytes) || e["size_bytes"].(float64) <= budgetBytes {
		t.Fatalf("error = %v", e)
	}
	if !strings.Contains(e["hint"].(string), "fields") {
		t.Errorf("hint %q does not suggest fields", e["hint"])
	}
}
