package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/board/sim/sipgen"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
)

// feedRegistrations runs sipgen's registration scenario into d's store.
func feedRegistrations(t *testing.T, d Deps) {
	t.Helper()
	pkts, err := sipgen.Registrations(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	a := sip.NewAnalyser(d.SIP, netdecode.Options{})
	for _, p := range pkts {
		a.Feed(p.Time, wire.LinkEthernet, p.Data)
	}
}

// TestSIPRegistrations: one row per AoR with the scenario's states, the
// filters, projection and paging, and the sender's text fenced.
func TestSIPRegistrations(t *testing.T) {
	d := fullDeps(t)
	d.Source = func() SourceInfo { return SourceInfo{CaptureIdentity: "registrations.pcapng", SourceExhausted: true} }
	feedRegistrations(t, d)
	s := testServer(t, d, sipRegistrations)

	_, env := callTool(t, s, "sip_registrations", nil)
	rows := items(env)
	states := map[string]string{}
	for _, r := range rows {
		states[r["aor"].(string)] = r["state"].(string) + "/" + r["kind"].(string)
	}
	want := map[string]string{
		"sip:1001@pbx.example.com": "lapsed/user", "sip:1002@pbx.example.com": "failed/user", "sip:1003@pbx.example.com": "registered/user",
		"sip:1004@pbx.example.com": "unregistered/user", "sip:4420790000@sip.provider.example": "registered/trunk",
	}
	if len(states) != len(want) {
		t.Fatalf("rows %v, want %v", states, want)
	}
	for aor, w := range want {
		if states[aor] != w {
			t.Errorf("%s: %s, want %s", aor, states[aor], w)
		}
	}
	for _, r := range rows {
		if r["judged_at"] != "2026-03-01T09:03:19.92Z" {
			t.Errorf("%s judged at %v, want the capture's last message", r["aor"], r["judged_at"])
		}
		if ua, _ := r["user_agent"].(string); !strings.HasPrefix(ua, untrusted.Open) {
			t.Errorf("%s: user agent not fenced: %q", r["aor"], ua)
		}
		if u, _ := r["request_uri"].(string); !strings.HasPrefix(u, untrusted.Open) {
			t.Errorf("%s: request URI not fenced: %q", r["aor"], u)
		}
		if strings.Contains(r["aor"].(string), untrusted.Open) {
			t.Errorf("the AoR is an identifier, bare: %q", r["aor"])
		}
		if r["aor"] == "sip:1003@pbx.example.com" {
			if r["flaps"] != 2.0 || r["successes"] != 3.0 || r["challenged_successes"] != 1.0 || r["lapses"] != 1.0 {
				t.Errorf("1003: %v", r)
			}
			cs := r["contacts"].([]any)
			if len(cs) != 1 || cs[0].(map[string]any)["expires_s"] != 120.0 || !strings.Contains(cs[0].(map[string]any)["uri"].(string), "sip:1003@192.0.2.12:5060") {
				t.Errorf("1003 contacts %v", cs)
			}
		}
		if r["aor"] == "sip:1002@pbx.example.com" {
			f := r["failures"].([]any)
			if r["failed_challenges"] != 2.0 || r["no_answer"] != 1.0 || len(f) != 1 || f[0].(map[string]any)["code"] != 403.0 || r["last_failure_code"] != nil {
				t.Errorf("1002: %v", r)
			}
		}
	}

	for _, tc := range []struct {
		args map[string]any
		want []string
	}{
		{map[string]any{"state": "lapsed"}, []string{"sip:1001@pbx.example.com"}},
		{map[string]any{"kind": "trunk"}, []string{"sip:4420790000@sip.provider.example"}},
		{map[string]any{"aor": "PBX.example"}, []string{"sip:1001@pbx.example.com", "sip:1002@pbx.example.com", "sip:1003@pbx.example.com", "sip:1004@pbx.example.com"}},
		{map[string]any{"registrar": "198.51.100.1"}, []string{"sip:4420790000@sip.provider.example"}},
		{map[string]any{"registrar": "pbx.example.com", "state": "registered"}, []string{"sip:1003@pbx.example.com"}},
	} {
		_, env := callTool(t, s, "sip_registrations", tc.args)
		var got []string
		for _, r := range items(env) {
			got = append(got, r["aor"].(string))
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.args, got, tc.want)
		}
	}

	// Projection keeps the id; paging walks every row once.
	_, env = callTool(t, s, "sip_registrations", map[string]any{"fields": []string{"state"}, "limit": 2})
	seen := map[string]bool{}
	for {
		for _, r := range items(env) {
			if len(r) != 2 || r["aor"] == nil || r["state"] == nil {
				t.Fatalf("projected row %v", r)
			}
			if seen[r["aor"].(string)] {
				t.Fatalf("%s twice", r["aor"])
			}
			seen[r["aor"].(string)] = true
		}
		next := pageOf(env)["next_cursor"].(string)
		if next == "" {
			break
		}
		_, env = callTool(t, s, "sip_registrations", map[string]any{"fields": []string{"state"}, "limit": 2, "cursor": next})
	}
	if len(seen) != 5 {
		t.Errorf("paging saw %d rows, want 5", len(seen))
	}

	if res, env := callTool(t, s, "sip_registrations", map[string]any{"state": "up"}); !res.IsError {
		t.Errorf("an unknown state was accepted: %v", env)
	}
}

// TestSubscribedRegistrationsTellAChange: the live view is what the tool
// answers, and a subscriber hears of new registrations.
func TestSubscribedRegistrationsTellAChange(t *testing.T) {
	b := newLiveBox(t)
	s := testServer(t, b.d, sipRegistrations)
	view := readResource(t, s, "fieldtap://live/registrations")
	res, _ := callTool(t, s, "sip_registrations", nil)
	if view.Contents[0].Text != res.Content[0].Text {
		t.Errorf("view and tool disagree:\nview %s\ntool %s", view.Contents[0].Text, res.Content[0].Text)
	}

	u := &updates{}
	c := sdk.NewClient(&sdk.Implementation{Name: "subscribe-test", Version: "1"}, &sdk.ClientOptions{ResourceUpdatedHandler: u.handler})
	cs, _ := connectors[0].connect(t, b, c, sipRegistrations)
	if err := cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: "fieldtap://live/registrations"}); err != nil {
		t.Fatal(err)
	}
	feedRegistrations(t, b.d)
	eventually(t, "a notification after the REGISTERs", func() bool { return u.n() >= 1 })
	if u.uris[0] != "fieldtap://live/registrations" {
		t.Errorf("notified about %v", u.uris)
	}
}
