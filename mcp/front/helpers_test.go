package front

import (
	"io"
	"log/slog"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp"
	"fieldtap/services/ports"
)

// The front door serves whatever MCP server it is given; these tests
// give it the real one (mcp.NewServer), as the daemon does. Only tests
// import mcp here (imports_test.go checks non-test code).

// toolCaptureStatus is a read-only tool every server has.
const toolCaptureStatus = "capture_status"

type fakePorts []ports.Status

func (f fakePorts) Snapshot() []ports.Status { return f }

func testLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testDeps() mcp.Deps {
	return mcp.Deps{
		Ports:  fakePorts{{Name: "span0", Kind: "ethernet", Frames: 3}},
		Log:    testLog(),
		Source: func() mcp.SourceInfo { return mcp.SourceInfo{CaptureIdentity: "test", Live: true} },
		Info:   mcp.ServerInfo{Version: "test"},
	}
}

// testServer is the real server over testDeps with o.
func testServer(t testing.TB, o mcp.Options) *server.MCPServer {
	t.Helper()
	s, err := mcp.NewServer(testDeps(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
