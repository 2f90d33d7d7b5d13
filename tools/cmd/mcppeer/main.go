// Command mcppeer is the yardstick for the MCP overhead benchmark
// (firmware/cmd/fieldtapd BenchmarkToolCallEndToEnd, issue #39): the
// smallest mcp-go server, built on the mcp-go version fieldtapd uses,
// with one tool, answer, that returns the text of a file read at start.
// The benchmark hands it list_dialogs' answer, so both servers send the
// same bytes over the same transport, and what the peer spends per call
// is the floor mcp-go and the Go runtime set for that answer.
//
//	mcppeer -answer FILE                       # MCP over stdio
//	mcppeer -answer FILE -listen 127.0.0.1:0   # streamable HTTP at /mcp; the URL is printed on stderr
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	answer := flag.String("answer", "", "file whose text the answer tool returns (required)")
	listen := flag.String("listen", "", "serve streamable HTTP on this address instead of stdio")
	flag.Parse()
	if err := run(*answer, *listen); err != nil {
		fmt.Fprintln(os.Stderr, "mcppeer:", err)
		os.Exit(1)
	}
}

func run(answerFile, listen string) error {
	if answerFile == "" {
		return fmt.Errorf("-answer FILE is required")
	}
	b, err := os.ReadFile(answerFile)
	if err != nil {
		return err
	}
	text := string(b)
	s := server.NewMCPServer("mcppeer", "1")
	tool := mcp.NewTool("answer", mcp.WithDescription("Returns the answer file's text."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false))
	s.AddTool(tool, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(text), nil
	})
	if listen == "" {
		return server.ServeStdio(s)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mcppeer: serving url=http://%s/mcp\n", ln.Addr())
	return http.Serve(ln, server.NewStreamableHTTPServer(s))
}
