package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"
)

// allInfos is every compiled tool's contract, by bundle.
func allInfos(t *testing.T) map[string][]toolInfo {
	t.Helper()
	out := map[string][]toolInfo{}
	seen := map[string]string{}
	for _, b := range allBundles() {
		for _, td := range b.tools {
			i := td.info()
			if prev, dup := seen[i.name]; dup {
				t.Errorf("tool %s in bundles %s and %s", i.name, prev, b.name)
			}
			seen[i.name] = b.name
			out[b.name] = append(out[b.name], i)
		}
	}
	return out
}

// TestEveryToolDeclaresItsContract walks tools/list as a client sees it
// with every bundle loaded and output schemas on: a description, all four
// hints set explicitly, an object input schema without a "type": [..]
// union, and an output schema that an independent validator compiles.
func TestEveryToolDeclaresItsContract(t *testing.T) {
	s, err := NewServer(fullDeps(t), Options{Bundles: BundleNames(), OutputSchemas: true})
	if err != nil {
		t.Fatal(err)
	}
	v := newOutputValidator()
	tools := listTools(t, s)
	if len(tools) < 2 {
		t.Fatalf("tools/list has %d tools", len(tools))
	}
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			if tool.Description == "" {
				t.Error("no description")
			}
			for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
				if _, set := tool.Annotations[h].(bool); !set {
					t.Errorf("%s not set explicitly: %v", h, tool.Annotations)
				}
			}
			var in map[string]any
			if err := json.Unmarshal(tool.InputSchema, &in); err != nil || in["type"] != "object" {
				t.Errorf("input schema is not an object: %s", tool.InputSchema)
			}
			if strings.Contains(string(tool.InputSchema), `"type":[`) {
				t.Errorf("input schema has a type union: %s", tool.InputSchema)
			}
			var out map[string]any
			if err := json.Unmarshal(tool.Output, &out); err != nil || out["type"] != "object" {
				t.Errorf("output schema is not an object: %s", tool.Output)
			}
			// A failure is an answer of every tool: it must validate too.
			v.validate(t, tool.Name, tool.Output, []byte(`{"ok":false,"source":{"capture_identity":"x","live":false,"source_exhausted":true},"warnings":[],"errors":[{"code":"INTERNAL","message":"m","hint":"h"}]}`))
		})
	}
}

// snakeCase is the only key spelling an answer may use.
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestOutputKeysAreSnakeCase walks every output schema's property names.
func TestOutputKeysAreSnakeCase(t *testing.T) {
	for _, infos := range allInfos(t) {
		for _, i := range infos {
			var schema any
			if err := json.Unmarshal(i.output(), &schema); err != nil {
				t.Fatal(err)
			}
			walkProperties(schema, "", func(path, key string) {
				if !snakeCase.MatchString(key) {
					t.Errorf("%s: key %q at %s is not snake_case", i.name, key, path)
				}
			})
		}
	}
}

func walkProperties(v any, path string, fn func(path, key string)) {
	switch x := v.(type) {
	case map[string]any:
		if props, isMap := x["properties"].(map[string]any); isMap {
			for k, sub := range props {
				fn(path, k)
				walkProperties(sub, path+"."+k, fn)
			}
		}
		for k, sub := range x {
			if k != "properties" {
				walkProperties(sub, path, fn)
			}
		}
	case []any:
		for _, sub := range x {
			walkProperties(sub, path, fn)
		}
	}
}

// TestListToolsPageAndProject: every tool answering a page takes limit,
// cursor and fields, names its id columns, and its fields enum is exactly
// its row's columns.
func TestListToolsPageAndProject(t *testing.T) {
	for b, infos := range allInfos(t) {
		for _, i := range infos {
			if !i.list {
				continue
			}
			for _, arg := range []string{"limit", "cursor", "fields"} {
				if !slices.Contains(i.input().names(), arg) {
					t.Errorf("%s (%s): list tool takes no %s", i.name, b, arg)
				}
			}
			if len(i.ids) == 0 {
				t.Errorf("%s: names no id columns", i.name)
			}
			var enum []string
			for _, e := range i.input().s.Properties["fields"].Items.Enum {
				enum = append(enum, e.(string))
			}
			if !slices.Equal(enum, i.columns) {
				t.Errorf("%s: fields enum %v, columns %v", i.name, enum, i.columns)
			}
		}
	}
}

// TestPerPortToolsTakeOnePortArgument: a tool whose rows or objects carry
// a port takes the port argument. capture_status and open_capture answer
// ports' own statuses, not data selected by port; rule_status answers
// rules, whose port is what a rule watches.
func TestPerPortToolsTakeOnePortArgument(t *testing.T) {
	for _, infos := range allInfos(t) {
		for _, i := range infos {
			// The coverage block names ports for every tool: the answer's
			// own rows are what count here.
			if i.name == toolCaptureStatus || i.name == openCapture.name || i.name == toolRuleStatus || !strings.Contains(string(withoutCoverage(i.output)()), `"port"`) {
				continue
			}
			if !slices.Contains(i.input().names(), "port") {
				t.Errorf("%s answers per-port data but takes no port argument", i.name)
			}
		}
	}
}

func TestNewServerRefusesUnknownBundle(t *testing.T) {
	if _, err := NewServer(fullDeps(t), Options{Bundles: []string{"server", "nope"}}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("err = %v, want it to name the bundle", err)
	}
}

func TestNewServerRefusesATinyBudget(t *testing.T) {
	if _, err := NewServer(fullDeps(t), Options{MaxResponseBytes: MinMaxResponseBytes - 1}); err == nil {
		t.Fatal("a budget under the minimum was accepted")
	}
}

// TestDefaultBundlesNeverTransmit keeps transmit opt-in.
func TestDefaultBundlesNeverTransmit(t *testing.T) {
	for _, vehicle := range []bool{false, true} {
		if slices.Contains(DefaultBundles(vehicle), bundleTransmit) {
			t.Errorf("the transmit bundle loads by default (vehicle ports %v)", vehicle)
		}
	}
}

// TestVehicleDepthByDefaultOnAVehicleBox: with no bundles named, a box
// listing a CAN or J1708 port loads the vehicle depth (dbc_files,
// uds_trace, …), one with only Ethernet ports does not; "all" loads
// every bundle, transmit included.
func TestVehicleDepthByDefaultOnAVehicleBox(t *testing.T) {
	vehicleTools := []string{"dbc_files", "dbc_inspect", "uds_trace"}
	for _, tc := range []struct {
		ports   fakePorts
		bundles []string
		want    bool
	}{
		{ports: fakePorts{{Name: "span0", Kind: "ethernet"}}},
		{ports: fakePorts{{Name: "span0", Kind: "ethernet"}, {Name: "can0", Kind: "can"}}, want: true},
		{ports: fakePorts{{Name: "j1708", Kind: "j1708"}}, want: true},
		{ports: fakePorts{{Name: "span0", Kind: "ethernet"}}, bundles: []string{AllBundles}, want: true},
	} {
		s, err := NewServer(withPorts(fullDeps(t), tc.ports), Options{Bundles: tc.bundles})
		if err != nil {
			t.Fatal(err)
		}
		names := toolNames(t, s)
		for _, n := range vehicleTools {
			if slices.Contains(names, n) != tc.want {
				t.Errorf("ports %v bundles %v: %s listed %v, want %v", tc.ports, tc.bundles, n, !tc.want, tc.want)
			}
		}
		if all := slices.Equal(tc.bundles, []string{AllBundles}); slices.Contains(names, "can_send") != all {
			t.Errorf("bundles %v: can_send listed %v", tc.bundles, !all)
		}
	}
	if got := ResolveBundles([]string{AllBundles}, false); !slices.Equal(got, BundleNames()) {
		t.Errorf("all = %v", got)
	}
}

// TestOutputSchemasAreTheOperatorsChoice: off, tools/list carries none;
// on, every tool has one.
func TestOutputSchemasAreTheOperatorsChoice(t *testing.T) {
	for _, on := range []bool{false, true} {
		s, err := NewServer(fullDeps(t), Options{Bundles: BundleNames(), OutputSchemas: on})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range listTools(t, s) {
			if (len(tool.Output) > 0) != on {
				t.Errorf("output_schemas=%v: %s has output schema %q", on, tool.Name, tool.Output)
			}
		}
	}
}

// TestWriteToolsMatchTheProtocolTable fails when the set of tools that are
// not read-only differs from the table in docs/mcp-protocol.md, so a new
// write verb, or a tool quietly flipped, cannot ship unnoticed.
func TestWriteToolsMatchTheProtocolTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "mcp-protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, found := strings.Cut(string(doc), "<!-- write-tools:begin -->")
	table, _, found2 := strings.Cut(rest, "<!-- write-tools:end -->")
	if !found || !found2 {
		t.Fatal("docs/mcp-protocol.md has no write-tools table markers")
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		if name == "" || name == "tool" || strings.HasPrefix(name, "---") || name == "(none)" {
			continue
		}
		documented[name] = true
	}
	registered := map[string]bool{}
	for _, infos := range allInfos(t) {
		for _, i := range infos {
			if ro := i.hints.ReadOnlyHint; ro == nil || !*ro {
				registered[i.name] = true
			}
		}
	}
	for n := range registered {
		if !documented[n] {
			t.Errorf("%s is not read-only but is missing from the write-tools table in docs/mcp-protocol.md", n)
		}
	}
	for n := range documented {
		if !registered[n] {
			t.Errorf("docs/mcp-protocol.md lists %s as a write tool, but no such non-read-only tool is registered", n)
		}
	}
}

// TestDescribeResponseShape answers any loaded tool's schema, advertised
// or not, with an example.
func TestDescribeResponseShape(t *testing.T) {
	s, err := NewServer(fullDeps(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, env := callTool(t, s, toolDescribeResponseShape, map[string]any{"tool": toolCaptureStatus})
	if r.IsError {
		t.Fatal(r.Content[0].Text)
	}
	data := env["data"].(map[string]any)
	if data["output_schema"].(map[string]any)["type"] != "object" {
		t.Errorf("schema = %v", data["output_schema"])
	}
	ex := data["example"].(map[string]any)
	if ex["ok"] != true || ex["data"] == nil || ex["source"] == nil {
		t.Errorf("example = %v", ex)
	}
	r, env = callTool(t, s, toolDescribeResponseShape, map[string]any{"tool": "nope"})
	if !r.IsError {
		t.Fatal("an unknown tool was described")
	}
	if _, _, hint := firstError(t, env); !strings.Contains(hint, toolCaptureStatus) || !strings.Contains(hint, toolDescribeResponseShape) {
		t.Errorf("hint %q does not list the loaded tools", hint)
	}
}

// toolNames lists the tools s offers in tools/list.
func toolNames(t *testing.T, s *server.MCPServer) []string {
	t.Helper()
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(rpc(t, s, "tools/list", map[string]any{}), &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}
