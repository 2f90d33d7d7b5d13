package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/services/rules"
)

// coolantRule fires while any J1939 source's DM1 lists SPN 110 active:
// the DM1 the live box feeds (resources_test.go).
var coolantRule = rules.Rule{Name: "coolant", Kind: rules.KindDM1, Code: 110, Op: rules.Above, Window: time.Minute, Severity: "critical"}

// TestSubscribedRulesTellAStateChange: a go-sdk client subscribed to
// fieldtap://live/rules hears nothing while the rule is evaluated and
// stays ok, one notification once a DM1 makes it fire, and reading the
// view then gives the firing verdict and the change in its history.
func TestSubscribedRulesTellAStateChange(t *testing.T) {
	for _, cn := range connectors {
		t.Run(cn.name, func(t *testing.T) {
			b := newLiveBox(t)
			e, err := rules.New([]rules.Rule{coolantRule}, rules.Box{Ports: b.ports, J1939: b.d.J1939})
			if err != nil {
				t.Fatal(err)
			}
			b.d.Rules = e
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			tick := func() []rules.Transition { now = now.Add(5 * time.Second); return e.Tick(now) }
			if trs := tick(); len(trs) != 1 || trs[0].To != rules.StateOK {
				t.Fatalf("first tick %+v, want no_data→ok", trs)
			}
			u := &updates{}
			c := sdk.NewClient(&sdk.Implementation{Name: "rules-test", Version: "1"}, &sdk.ClientOptions{ResourceUpdatedHandler: u.handler})
			s, _ := cn.connect(t, b, c, ruleStatusTool)
			ctx := context.Background()
			if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: "fieldtap://live/rules"}); err != nil {
				t.Fatal(err)
			}
			for range 30 { // 1.5 s: six watcher ticks, past the debounce
				b.feed(t, eec1)
				if trs := tick(); len(trs) != 0 {
					t.Fatalf("the rule changed on engine data: %+v", trs)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if n := u.n(); n != 0 {
				t.Fatalf("%d notifications while no rule changed state (%v)", n, u.uris)
			}
			b.feed(t, dm1)
			if trs := tick(); len(trs) != 1 || trs[0].To != rules.StateFiring {
				t.Fatalf("tick after the DM1 %+v, want ok→firing", trs)
			}
			eventually(t, "a notification after the rule fired", func() bool { return u.n() >= 1 })
			if u.uris[0] != "fieldtap://live/rules" {
				t.Errorf("notified about %v", u.uris)
			}
			res, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: "fieldtap://live/rules"})
			if err != nil {
				t.Fatal(err)
			}
			var env struct {
				Data ruleStatusOut `json:"data"`
			}
			if err := json.Unmarshal([]byte(res.Contents[0].Text), &env); err != nil {
				t.Fatal(err)
			}
			rs, h := env.Data.Rules, env.Data.History
			if len(rs) != 1 || rs[0].State != rules.StateFiring || rs[0].Value == nil || *rs[0].Value != 1 || rs[0].Tool != "j1939_faults" {
				t.Errorf("verdicts %+v, want coolant firing on one source", rs)
			}
			if len(h) != 2 || h[0].To != rules.StateOK || h[1].From != rules.StateOK || h[1].To != rules.StateFiring || !h[1].At.Equal(now) ||
				env.Data.Page.Returned != 2 || env.Data.LetGo != 0 {
				t.Errorf("history %+v page %+v, want no_data→ok, ok→firing at %v", h, env.Data.Page, now)
			}
		})
	}
}
