package mqttpub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/j1939"
	"fieldtap/services/mqttpub/mqtttest"
	"fieldtap/services/sip"
)

func newPublisher(t *testing.T, url string, queue int) (*Publisher, func()) {
	t.Helper()
	p, err := New(Options{Broker: url, ClientID: "box-" + t.Name(), Prefix: "fieldtap/box1", QueueMessages: queue, Online: map[string]string{"board": "sim"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	return p, func() {
		cancel()
		if err := <-done; err != nil {
			t.Logf("publisher stopped: %v", err)
		}
	}
}

func has(topic, payload string) func([]mqtttest.Message) bool {
	return func(ms []mqtttest.Message) bool {
		for _, m := range ms {
			if m.Topic == topic && strings.Contains(string(m.Payload), payload) {
				return true
			}
		}
		return false
	}
}

// TestStatusAndOffline: the status topic says online while the box
// runs, and offline once it stops cleanly.
func TestStatusAndOffline(t *testing.T) {
	b := mqtttest.Start(t)
	sub := b.Subscribe("fieldtap/box1/#")
	_, stop := newPublisher(t, b.URL(), 0)
	sub.Wait("online status", has("fieldtap/box1/status", `"online":true`))
	stop()
	got := sub.Wait("offline status", has("fieldtap/box1/status", `"online":false`))
	if !strings.Contains(string(got[0].Payload), `"board":"sim"`) {
		t.Errorf("status %s lacks the box's identity", got[0].Payload)
	}
}

// TestBrokerAwayQueueBounded stops the broker mid-run: the queue keeps
// at most its bound, counts what it dropped, and delivers the newest
// messages once the broker is back.
func TestBrokerAwayQueueBounded(t *testing.T) {
	const queue, published = 10, 50
	b := mqtttest.Start(t)
	sub := b.Subscribe("fieldtap/box1/calls")
	p, stop := newPublisher(t, b.URL(), queue)
	defer stop()
	p.Publish(TopicCalls, []byte(`{"n":-1}`), false)
	sub.Wait("the first event", has("fieldtap/box1/calls", `{"n":-1}`))

	b.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for p.Stats().Connected {
		if time.Now().After(deadline) {
			t.Fatal("the publisher never noticed the broker left")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i := range published {
		p.Publish(TopicCalls, fmt.Appendf(nil, `{"n":%d}`, i), false)
	}
	st := p.Stats()
	if st.Queued > queue || st.Dropped < published-queue {
		t.Fatalf("while away: %+v, want at most %d queued and at least %d dropped", st, queue, published-queue)
	}
	t.Logf("broker away: %d queued (%d bytes), %d dropped", st.Queued, st.QueuedBytes, st.Dropped)

	b.Restart()
	sub.Reconnect()
	t.Cleanup(func() { t.Logf("publisher %+v\n%s", p.Stats(), b.Log()) })
	got := sub.Wait("the queued events", has("fieldtap/box1/calls", fmt.Sprintf(`{"n":%d}`, published-1)))
	var ns []int
	for _, m := range got {
		var v struct{ N int }
		if json.Unmarshal(m.Payload, &v) == nil && v.N >= 0 {
			ns = append(ns, v.N)
		}
	}
	if len(ns) != queue || ns[0] != published-queue || ns[len(ns)-1] != published-1 {
		t.Errorf("after the broker came back: events %v, want the newest %d in order", ns, queue)
	}
}

// TestFeederFaultsRetainedPerSA publishes one retained topic per source
// address and clears it when the fault goes away.
func TestFeederFaultsRetainedPerSA(t *testing.T) {
	faults := &fakeFaults{list: []j1939.Fault{
		{Port: "can0", SA: 0, ECU: j1939.ECUName(0, nil), Kind: "DM1", DTCs: []j1939.DTC{{SPN: 110, FMI: 0, OC: 3}}, Lamps: j1939.Lamps{AmberWarn: 1}},
		{Port: "can0", SA: 0x0B, Kind: "DM1", DTCs: []j1939.DTC{{SPN: 521, FMI: 2, OC: 1}}},
		{Port: "can0", SA: 0x03, Kind: "DM1", NoActive: true},
	}}
	sink := &recordSink{}
	f := NewFeeder(sink, Sources{J1939: faults})
	f.Tick()
	f.Tick() // unchanged: nothing republished
	if got := sink.topics(); strings.Join(got, " ") != "faults/j1939/can0/00 faults/j1939/can0/0B" {
		t.Fatalf("published %v, want one retained topic per SA with active codes", got)
	}
	var sf SourceFaults
	if err := json.Unmarshal(sink.msgs[0].payload, &sf); err != nil || sf.Name != "Engine #1" || sf.Codes[0].SPN != 110 || sf.Lamps[0] != "amber_warning" {
		t.Errorf("payload %s", sink.msgs[0].payload)
	}
	faults.list = faults.list[1:]
	sink.msgs = nil
	f.Tick()
	if len(sink.msgs) != 1 || sink.msgs[0].topic != "faults/j1939/can0/00" || len(sink.msgs[0].payload) != 0 || !sink.msgs[0].retain {
		t.Errorf("after SA 00 cleared: %+v, want one empty retained message on its topic", sink.msgs)
	}
}

type fakeFaults struct{ list []j1939.Fault }

func (f *fakeFaults) Faults() []j1939.Fault { return f.list }

type recordSink struct{ msgs []message }

func (r *recordSink) Publish(topic string, payload []byte, retain bool) {
	r.msgs = append(r.msgs, message{topic: topic, payload: payload, retain: retain})
}

func (r *recordSink) topics() []string {
	var out []string
	for _, m := range r.msgs {
		out = append(out, m.topic)
	}
	return out
}

func TestQueue(t *testing.T) {
	tests := []struct {
		name                     string
		push                     []message
		maxItems, maxBytes       int
		want                     []string
		dropped, superseded, big uint64
	}{
		{name: "retained state coalesces per topic", maxItems: 10, maxBytes: 1000,
			push: []message{{topic: "a", payload: []byte("1"), retain: true}, {topic: "e", payload: []byte("x")}, {topic: "a", payload: []byte("2"), retain: true}},
			want: []string{"e=x", "a=2"}, superseded: 1},
		{name: "events do not coalesce", maxItems: 10, maxBytes: 1000,
			push: []message{{topic: "e", payload: []byte("1")}, {topic: "e", payload: []byte("2")}},
			want: []string{"e=1", "e=2"}},
		{name: "oldest dropped past the item bound", maxItems: 2, maxBytes: 1000,
			push: []message{{topic: "e", payload: []byte("1")}, {topic: "e", payload: []byte("2")}, {topic: "e", payload: []byte("3")}},
			want: []string{"e=2", "e=3"}, dropped: 1},
		{name: "oldest dropped past the byte bound", maxItems: 10, maxBytes: 6,
			push: []message{{topic: "e", payload: []byte("11")}, {topic: "e", payload: []byte("22")}, {topic: "e", payload: []byte("33")}},
			want: []string{"e=22", "e=33"}, dropped: 1},
		{name: "larger than the bound refused", maxItems: 10, maxBytes: 4,
			push: []message{{topic: "e", payload: []byte("1234")}}, big: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(tc.maxItems, tc.maxBytes)
			for _, m := range tc.push {
				q.push(m.topic, m.payload, m.retain)
			}
			var got []string
			for {
				m, ok := q.head()
				if !ok {
					break
				}
				got = append(got, m.topic+"="+string(m.payload))
				q.done(m)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") || q.dropped != tc.dropped || q.superseded != tc.superseded || q.tooLarge != tc.big {
				t.Errorf("got %v dropped %d superseded %d too large %d, want %v %d %d %d", got, q.dropped, q.superseded, q.tooLarge, tc.want, tc.dropped, tc.superseded, tc.big)
			}
			if n, b := q.len(); n != 0 || b != 0 {
				t.Errorf("drained queue holds %d messages, %d bytes", n, b)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		ok   bool
	}{
		{name: "defaults", o: Options{Broker: "mqtt://broker:1883", ClientID: "b", Prefix: "fieldtap/b"}, ok: true},
		{name: "no port", o: Options{Broker: "mqtt://broker", ClientID: "b", Prefix: "fieldtap/b"}},
		{name: "wildcard prefix", o: Options{Broker: "mqtt://broker:1883", ClientID: "b", Prefix: "fieldtap/#"}},
		{name: "queue too big", o: Options{Broker: "mqtt://broker:1883", ClientID: "b", Prefix: "p", QueueBytes: MaxQueueBytes + 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.o); (err == nil) != tc.ok {
				t.Errorf("New = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

type fakeCalls struct{ sn *sip.Snapshot }

func (f *fakeCalls) Snapshot() *sip.Snapshot { return f.sn }

// TestFeederCallsOncePerFinishedCall: a finished INVITE dialog is
// summarised once; one still ringing waits for its end; non-INVITE
// dialogs are not calls, but a Call-ID that opened with REGISTER and then
// carried an INVITE is one.
func TestFeederCallsOncePerFinishedCall(t *testing.T) {
	d := func(id uint64, method, state string) *sip.Dialog {
		return &sip.Dialog{ID: id, CallID: fmt.Sprintf("c%d", id), FirstMethod: method, HasInvite: method == "INVITE", State: state, FromUser: "alice\u202e"}
	}
	reused := d(7, "REGISTER", sip.StateFailed)
	reused.HasInvite = true
	calls := &fakeCalls{sn: &sip.Snapshot{Dialogs: []*sip.Dialog{
		d(1, "INVITE", sip.StateEnded), d(2, "INVITE", sip.StateEarly), d(3, "REGISTER", sip.StateCompleted), d(4, "INVITE", sip.StateFailed), reused,
	}}}
	sink := &recordSink{}
	f := NewFeeder(sink, Sources{Calls: calls})
	ids := func() []string {
		var out []string
		for _, m := range sink.msgs {
			var c CallSummary
			if err := json.Unmarshal(m.payload, &c); err != nil {
				t.Fatal(err)
			}
			if m.topic != TopicCalls || m.retain {
				t.Errorf("call summary on %s retained=%v", m.topic, m.retain)
			}
			out = append(out, c.CallID)
		}
		return out
	}
	f.Tick()
	f.Tick()
	if got := strings.Join(ids(), " "); got != "c1 c4 c7" {
		t.Fatalf("after two ticks: %q, want c1 c4 c7 once each", got)
	}
	if !strings.HasPrefix(string(sink.msgs[0].payload), `{"call_id":"c1"`) || strings.Contains(string(sink.msgs[0].payload), "\u202e") {
		t.Errorf("summary %s: the caller should arrive fenced, bidi control removed", sink.msgs[0].payload)
	}
	calls.sn = &sip.Snapshot{Dialogs: []*sip.Dialog{d(1, "INVITE", sip.StateEnded), d(2, "INVITE", sip.StateEnded), d(4, "INVITE", sip.StateFailed), reused, d(8, "INVITE", sip.StateCancelled), d(9, "INVITE", sip.StateEarly)}}
	f.Tick()
	if got := strings.Join(ids(), " "); got != "c1 c4 c7 c2 c8" {
		t.Errorf("after c2 ended and c8 came: %q", got)
	}
	if !f.pending[9] || len(f.pending) != 1 {
		t.Errorf("pending %v, want the ringing c9 only", f.pending)
	}
	calls.sn = &sip.Snapshot{}
	f.Tick()
	if len(f.pending) != 0 {
		t.Errorf("pending %v after the store evicted every dialog", f.pending)
	}
}

// TestCallSummaryFencesSenderText: the user parts and reason phrase are
// fenced by Sources.Fence (the daemon gives untrusted's), and left out
// without one, never published bare.
func TestCallSummaryFencesSenderText(t *testing.T) {
	d := &sip.Dialog{ID: 1, CallID: "c1", FirstMethod: "INVITE", HasInvite: true, State: sip.StateFailed, FinalCode: 486,
		FinalReason: "Busy\u202e", FromUser: "alice\x1b[31m", ToUser: "bob"}
	fenced := func(s string) string { return untrusted.Open + s + untrusted.Close }
	for _, tc := range []struct {
		name  string
		fence func(string) string
		want  string
	}{
		{name: "fenced", fence: func(s string) string { return untrusted.Fence(s, false) },
			want: `"final_reason":"` + fenced("Busy") + `","from_user":"` + fenced("alice[31m") + `","to_user":"` + fenced("bob") + `"`},
		{name: "no fence leaves it out", want: `"final_code":486,"from_user":"","to_user":""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &recordSink{}
			NewFeeder(sink, Sources{Calls: &fakeCalls{sn: &sip.Snapshot{Dialogs: []*sip.Dialog{d}}}, Fence: tc.fence}).Tick()
			if len(sink.msgs) != 1 || !strings.Contains(string(sink.msgs[0].payload), tc.want) {
				t.Errorf("published %+v, want a summary holding %s", sink.msgs, tc.want)
			}
		})
	}
}
