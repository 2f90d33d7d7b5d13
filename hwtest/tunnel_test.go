package hwtest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// tunnelInvites is how many INVITEs `guest tunnels` sends into each link.
const tunnelInvites = 10

// tunnelCheck is remote SPAN as the Linux kernel makes it: the guest
// makes gretap, erspan (version 1: type II; version 2: type III) and
// ip6gretap links over the dummy underlay the tun port captures, and
// sends INVITEs into each. Every INVITE is a dialog, and the port's
// tunnel counts equal the frames each link's kernel counters say it put
// on the underlay (gretap and ip6gretap are both GRE carrying Ethernet).
func tunnelCheck(t *testing.T, ctx context.Context, b *board, cs *sdk.ClientSession) {
	mark := b.console.size()
	if _, err := fmt.Fprintf(b.keys, "tunnels %d\n", tunnelInvites); err != nil {
		t.Fatalf("typing on the guest's console: %v", err)
	}
	var line string
	for deadline := time.Now().Add(checkGiveUp); ; time.Sleep(100 * time.Millisecond) {
		if l := b.console.since(mark, TunnelsLine, "guest tunnels failed"); len(l) > 0 {
			line = l[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q on the console", TunnelsLine)
		}
	}
	if !strings.Contains(line, TunnelsLine) {
		t.Fatalf("the guest could not make its tunnels: %s", b.console.since(mark, "guest: "))
	}
	tx := map[string]uint64{}
	for _, f := range strings.Fields(line[strings.Index(line, TunnelsLine)+len(TunnelsLine):]) {
		k, v, _ := strings.Cut(f, "=")
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", line, f)
		}
		tx[k] = n
	}
	if tx["sent"] != tunnelInvites {
		t.Fatalf("%s: want sent=%d", line, tunnelInvites)
	}
	want := map[string]uint64{"gre": tx["gt0"] + tx["gt6"], "erspan_ii": tx["es1"], "erspan_iii": tx["es2"]}
	p := waitPort(t, ctx, cs, TunnelPort, fmt.Sprintf("counting the links' frames %v", want), func(p portStatus) bool {
		return maps.Equal(p.Tunnels, want)
	})
	for _, link := range []string{"gt0", "es1", "es2", "gt6"} {
		var got struct {
			Page struct {
				TotalMatched int `json:"total_matched"`
			} `json:"page"`
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "list_dialogs", Arguments: map[string]any{"filter": fmt.Sprintf("call_id ~ \"^%s-\"", link)}})
		if err != nil || len(res.Content) == 0 {
			t.Fatalf("list_dialogs: %v", err)
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &got); err != nil {
			t.Fatal(err)
		}
		if got.Page.TotalMatched != tunnelInvites {
			t.Errorf("%s: %d dialogs, want the %d INVITEs sent into it", link, got.Page.TotalMatched, tunnelInvites)
		}
	}
	t.Logf("tun port: tunnels %v, links' tx %v", p.Tunnels, tx)
}
