package front

import (
	"io"
	"log/slog"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp"
	"fieldtap/services/coverage"
	"fieldtap/services/ports"
	"fieldtap/services/sandbox"
)

// The front door serves whatever MCP server it is given; these tests
// give it the real one (mcp.NewServer), as the daemon does. Only tests
// import mcp here (imports_test.go checks non-test code).

// toolCaptureStatus is a read-only tool every server has.
const toolCaptureStatus = "capture_status"

type fakePorts []ports.Status

func (f fakePorts) Snapshot() []ports.Status { return f }

func testLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testDeps is what every server needs and no store: the server bundle's
// tools read none.
func testDeps(t testing.TB) mcp.Deps {
	t.Helper()
	ps := fakePorts{{Name: "span0", Kind: "ethernet", Frames: 3}}
	files, err := sandbox.New()
	if err != nil {
		t.Fatal(err)
	}
	return mcp.Deps{
		Ports:    ps,
		Log:      testLog(),
		Source:   func() mcp.SourceInfo { return mcp.SourceInfo{CaptureIdentity: "test", Live: true} },
		Coverage: func(q coverage.Query) coverage.Report { return coverage.Build(q, coverage.Inputs{Ports: ps}) },
		Files:    files,
		Info:     mcp.ServerInfo{Version: "test"},
	}
}

// testServer is the real server over testDeps with o; without bundles
// it loads the server bundle, which has every tool these tests call.
func testServer(t testing.TB, o mcp.Options) *server.MCPServer {
	t.Helper()
	if o.Bundles == nil {
		o.Bundles = []string{"server"}
	}
	s, err := mcp.NewServer(testDeps(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
