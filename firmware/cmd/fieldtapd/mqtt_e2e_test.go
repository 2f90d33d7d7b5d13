package main

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"fieldtap/services/mqttpub/mqtttest"
)

// TestMQTTToMosquitto runs the sim board with MQTT on against Debian's
// Mosquitto: the status, state, the engine's DM1 retained on its SA's
// topic, the J1587 code on its MID's, call summaries; then fieldtapd is
// killed (a power cut) and the broker publishes its last will.
func TestMQTTToMosquitto(t *testing.T) {
	b := mqtttest.Start(t)
	sub := b.Subscribe("fieldtap/e2e-box/#")
	d := startDaemon(t, armedConfig(t, `replay_speed = "max"`, `[mqtt]
enabled = true
broker = "`+b.URL()+`"
box = "e2e-box"
interval = "1s"
`))
	on := func(topic, contains string) func([]mqtttest.Message) bool {
		return func(ms []mqtttest.Message) bool {
			for _, m := range ms {
				if m.Topic == "fieldtap/e2e-box/"+topic && strings.Contains(string(m.Payload), contains) {
					return true
				}
			}
			return false
		}
	}
	sub.Wait("online status", on("status", `"online":true`))
	sub.Wait("state with the arm switch on", on("state", `"armed":true`))
	sub.Wait("the engine's DM1 on its SA's topic", on("faults/j1939/can0/00", `"spn":110`))
	sub.Wait("the engine named as j1939_faults names it", on("faults/j1939/can0/00", `"name":"Engine #1"`))
	sub.Wait("the J1587 code on MID 128's topic", on("faults/j1587/128", `"code":110`))
	got := sub.Wait("an answered call's summary", on("calls", `"state":"ended"`))
	var call struct {
		CallID    string   `json:"call_id"`
		DurationS *float64 `json:"duration_s"`
		From      string   `json:"from_user"`
		Streams   []struct {
			MOS *float64 `json:"mos"`
		} `json:"streams"`
	}
	for _, m := range got {
		if m.Topic == "fieldtap/e2e-box/calls" && strings.Contains(string(m.Payload), `"state":"ended"`) {
			if err := json.Unmarshal(m.Payload, &call); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if call.CallID == "" || call.DurationS == nil || len(call.Streams) != 2 || call.Streams[0].MOS == nil || !strings.HasPrefix(call.From, "⟦untrusted-capture-data⟧") {
		t.Errorf("call summary %+v: want a Call-ID, a duration, two streams with MOS and the caller fenced", call)
	}
	for _, m := range got {
		if m.Topic == "fieldtap/e2e-box/faults/j1939/can0/00" && !m.Retain {
			t.Errorf("fault topic delivered as an event, want it retained")
		}
	}

	d.stop(syscall.SIGKILL)
	sub.Wait("the last will", on("status", `"online":false`))
}
