package mcp

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// TestEveryToolDeclaresItsContract walks the registry: description, all four
// hints set explicitly, an object output schema, no type unions in inputs.
func TestEveryToolDeclaresItsContract(t *testing.T) {
	for _, b := range bundles(testDeps()) {
		for _, st := range b.Tools {
			tool := st.Tool
			t.Run(tool.Name, func(t *testing.T) {
				if tool.Description == "" {
					t.Error("no description")
				}
				a := tool.Annotations
				if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
					t.Errorf("hints not all set: %+v", a)
				}
				in, err := json.Marshal(tool.InputSchema)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(in), `"type":[`) {
					t.Errorf("input schema has a type union: %s", in)
				}
				var out map[string]any
				if err := json.Unmarshal(tool.RawOutputSchema, &out); err != nil || out["type"] != "object" {
					t.Errorf("output schema is not an object: %s", tool.RawOutputSchema)
				}
			})
		}
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
	if _, err := NewServer(testDeps(), []string{"server", "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("err = %v, want it to name the bundle", err)
	}
}
