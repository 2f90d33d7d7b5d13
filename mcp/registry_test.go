package mcp

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/ports"
)

type fakePorts []ports.Status

func (f fakePorts) Snapshot() []ports.Status { return f }

func testDeps() Deps {
	return Deps{
		Ports:  fakePorts{{Name: "span0", Kind: "ethernet", Frames: 3}},
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Source: func() SourceInfo { return SourceInfo{CaptureIdentity: "test", Live: true} },
		Info:   ServerInfo{Version: "test"},
	}
}

func allTools(t *testing.T) map[string]string {
	t.Helper()
	tools := map[string]string{}
	for _, b := range bundles(testDeps()) {
		for _, st := range b.Tools {
			if prev, dup := tools[st.Tool.Name]; dup {
				t.Errorf("tool %s in bundles %s and %s", st.Tool.Name, prev, b.Name)
			}
			tools[st.Tool.Name] = b.Name
		}
	}
	return tools
}

// TestEveryToolDeclaresItsContract walks tools/list as a client sees it
// with every bundle loaded: description, all four hints set explicitly,
// an object output schema, and no "type": [..] union in an input schema.
func TestEveryToolDeclaresItsContract(t *testing.T) {
	s, err := NewServer(testDeps(), Options{Bundles: BundleNames(testDeps())})
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Output      json.RawMessage `json:"outputSchema"`
			Annotations map[string]any  `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(rpc(t, s, "tools/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) == 0 {
		t.Fatal("tools/list is empty")
	}
	for _, tool := range list.Tools {
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
		})
	}
}

// TestToolReferenceNamesEveryTool keeps docs/mcp-tools.md complete.
func TestToolReferenceNamesEveryTool(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "mcp-tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range allTools(t) {
		if !strings.Contains(string(doc), "### "+name+"\n") {
			t.Errorf("docs/mcp-tools.md has no section for %s", name)
		}
	}
}

func TestNewServerRefusesUnknownBundle(t *testing.T) {
	if _, err := NewServer(testDeps(), Options{Bundles: []string{"server", "nope"}}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("err = %v, want it to name the bundle", err)
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
	for _, b := range bundles(testDeps()) {
		for _, st := range b.Tools {
			if ro := st.Tool.Annotations.ReadOnlyHint; ro == nil || !*ro {
				registered[st.Tool.Name] = true
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

// TestListToolsTakeFields: every tool answering a page declares fields.
func TestListToolsTakeFields(t *testing.T) {
	for _, b := range bundles(testDeps()) {
		for _, st := range b.Tools {
			var out struct {
				Properties map[string]any `json:"properties"`
			}
			if err := json.Unmarshal(st.Tool.RawOutputSchema, &out); err != nil {
				t.Fatal(err)
			}
			if _, isList := out.Properties["items"]; !isList {
				continue
			}
			if _, has := inputProperties([]server.ServerTool{st})[st.Tool.Name]["fields"]; !has {
				t.Errorf("list tool %s (bundle %s) takes no fields argument: embed Projection, use inputSchema and listHandler", st.Tool.Name, b.Name)
			}
		}
	}
}

// TestDefaultBundlesNeverTransmit keeps transmit opt-in.
func TestDefaultBundlesNeverTransmit(t *testing.T) {
	if slices.Contains(DefaultBundles(testDeps()), bundleTransmit) {
		t.Error("the transmit bundle loads by default")
	}
}
