//go:build linux

package main

import (
	"context"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectConfirming runs fieldtapd over stdio with the config file and
// bundles, as a client that accepts every confirmation and records what
// the person was asked.
func connectConfirming(t *testing.T, ctx context.Context, cfg, bundles string) (*sdk.ClientSession, *lockedBuffer, *[]string) {
	t.Helper()
	s, _, stderr, asked := startConfirming(t, ctx, cfg, bundles)
	return s, stderr, asked
}

// startConfirming is connectConfirming that also returns the process, for
// a test that kills it.
func startConfirming(t *testing.T, ctx context.Context, cfg, bundles string) (*sdk.ClientSession, *exec.Cmd, *lockedBuffer, *[]string) {
	t.Helper()
	cmd := exec.Command(binary, "--config", cfg, "--mcp-transport", "stdio", "--mcp-bundles", bundles)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	asked := &[]string{}
	client := sdk.NewClient(&sdk.Implementation{Name: "fieldtap-e2e-transmit", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			*asked = append(*asked, req.Params.Message)
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"send": true}}, nil
		},
	})
	s, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	return s, cmd, stderr, asked
}
