package hwtest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fdCheck waits for guest cansendfd's frames on the vcan FD port: can_frames
// must answer them with fd and brs true, 64 bytes of data (DLC 15), and
// j1939_summary must have decoded the Multi-PG frames' EEC1 C-PGs.
func fdCheck(t *testing.T, ctx context.Context, cs *sdk.ClientSession) {
	t.Helper()
	id := fmt.Sprintf("%08X", FDMultiPGID)
	var last string
	for deadline := time.Now().Add(checkGiveUp); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		var frames struct {
			OK    bool `json:"ok"`
			Items []struct {
				FD, BRS, ESI bool
				DLC, Length  int
				Data         string
			} `json:"items"`
		}
		last = callText(t, ctx, cs, "can_frames", map[string]any{"port": FDPort, "id": id, "limit": 5})
		if json.Unmarshal([]byte(last), &frames) != nil || !frames.OK || len(frames.Items) == 0 {
			continue
		}
		for _, f := range frames.Items {
			if !f.FD || !f.BRS || f.ESI || f.Length != 64 || f.DLC != 15 || len(f.Data) != 128 || f.Data[:8] != "40F00408" {
				t.Fatalf("an FD frame on %s reads %+v: want fd, brs, 64 bytes (DLC 15) starting with the EEC1 C-PG header 40F00408", FDPort, f)
			}
		}
		var sum struct {
			Data struct {
				Ports []struct {
					Port    string `json:"port"`
					MultiPG struct {
						Frames uint64 `json:"frames"`
						CPGs   uint64 `json:"cpgs_decoded"`
					} `json:"multi_pg"`
				} `json:"ports"`
			} `json:"data"`
		}
		text := callText(t, ctx, cs, "j1939_summary", map[string]any{})
		if err := json.Unmarshal([]byte(text), &sum); err != nil {
			t.Fatalf("j1939_summary: %v: %s", err, text)
		}
		for _, p := range sum.Data.Ports {
			if p.Port == FDPort && p.MultiPG.CPGs > 0 {
				t.Logf("can_frames on %s: %d FD frames of 64 bytes, BRS, e.g. %s…", FDPort, len(frames.Items), frames.Items[0].Data[:24])
				t.Logf("j1939_summary on %s: %d Multi-PG frames, %d C-PGs decoded", FDPort, p.MultiPG.Frames, p.MultiPG.CPGs)
				return
			}
		}
		last = text
	}
	t.Fatalf("no CAN FD frame decoded on %s; last answer: %s", FDPort, last)
}

// callText calls tool and returns its first text content.
func callText(t *testing.T, ctx context.Context, cs *sdk.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].(*sdk.TextContent).Text
}
