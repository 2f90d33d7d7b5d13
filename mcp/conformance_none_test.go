//go:build !mcpconformance

package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestProductionBuildServesNoConformanceFixture: without the
// mcpconformance tag there are no fixtures, and a server with every
// compiled bundle lists no test_* tool or prompt and no test:// resource
// or template, refuses to call or subscribe to one, and answers
// completion of a fixture prompt empty.
func TestProductionBuildServesNoConformanceFixture(t *testing.T) {
	fx := conformanceFixtures()
	if n := len(fx.tools) + len(fx.prompts) + len(fx.resources) + len(fx.templates) + len(fx.watched); n != 0 {
		t.Fatalf("a production build carries %d conformance fixtures", n)
	}
	d := fullDeps(t)
	defs, err := loadBundles(d, BundleNames())
	if err != nil {
		t.Fatal(err)
	}
	s, subs := assemble(d, Options{MaxResponseBytes: DefaultMaxResponseBytes}, defs, true)
	var listed struct {
		Tools     []struct{ Name string } `json:"tools"`
		Prompts   []struct{ Name string } `json:"prompts"`
		Resources []struct{ URI string }  `json:"resources"`
		Templates []struct {
			URITemplate string `json:"uriTemplate"`
		} `json:"resourceTemplates"`
	}
	for _, m := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		if err := json.Unmarshal(rpc(t, s, m, map[string]any{}), &listed); err != nil {
			t.Fatal(err)
		}
	}
	if len(listed.Tools) == 0 || len(listed.Prompts) == 0 || len(listed.Resources) == 0 || len(listed.Templates) == 0 {
		t.Fatalf("the lists came back empty: %+v", listed)
	}
	var names []string
	for _, x := range listed.Tools {
		names = append(names, x.Name)
	}
	for _, x := range listed.Prompts {
		names = append(names, x.Name)
	}
	for _, x := range listed.Resources {
		names = append(names, x.URI)
	}
	for _, x := range listed.Templates {
		names = append(names, x.URITemplate)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "test_") || strings.HasPrefix(n, "test:") {
			t.Errorf("a production build lists %s", n)
		}
	}
	if err := subs.check("session", "test://watched-resource"); err == nil {
		t.Error("a production build accepts a subscription to test://watched-resource")
	}
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "test_simple_text"}})
	out, _ := json.Marshal(s.HandleMessage(context.Background(), call))
	if !strings.Contains(string(out), `"error"`) || strings.Contains(string(out), "simple text response") {
		t.Errorf("tools/call test_simple_text on a production build: %s", out)
	}
	var c struct {
		Completion struct{ Values []string } `json:"completion"`
	}
	if err := json.Unmarshal(rpc(t, s, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": map[string]any{"name": "arg1", "value": "test"},
	}), &c); err != nil || len(c.Completion.Values) != 0 {
		t.Errorf("completion of a fixture prompt: %+v, %v", c, err)
	}
}
