package config

import (
	"strings"
	"testing"
)

func TestFleetDefaultsAreOffAndValid(t *testing.T) {
	c := Default()
	if c.HEP.Enabled || c.MQTT.Enabled {
		t.Errorf("an exporter is on by default: hep %v mqtt %v", c.HEP.Enabled, c.MQTT.Enabled)
	}
	if len(c.Status.Listen) != 1 || c.Status.Listen[0] != DefaultStatusListen || !c.Status.Metrics {
		t.Errorf("status = %+v, want the page and metrics on loopback", c.Status)
	}
	c.HEP.Enabled, c.HEP.Collector = true, "homer.example:9060"
	c.MQTT.Enabled, c.MQTT.Broker = true, "mqtt://broker.example:1883"
	if err := c.Validate(); err != nil {
		t.Errorf("enabled with the defaults: %v", err)
	}
}

func TestFleetValidateNamesTheBadValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{name: "status beyond loopback without tokens", edit: func(c *Config) { c.Status.Listen = []string{"0.0.0.0:8732"} }, want: "status.listen"},
		{name: "status on the gadget without tokens", edit: func(c *Config) { c.Status.Listen = []string{"gadget:8732"} }, want: "mcp.tokens_file"},
		{name: "status listed twice", edit: func(c *Config) { c.Status.Listen = []string{"127.0.0.1:1", "127.0.0.1:1"} }, want: "listed twice"},
		{name: "hep without collector", edit: func(c *Config) { c.HEP.Enabled = true }, want: "hep.collector"},
		{name: "hep queue too small", edit: func(c *Config) { c.HEP.Enabled, c.HEP.Collector, c.HEP.QueueBytes = true, "h:1", 10 }, want: "hep.queue_bytes"},
		{name: "hep capture id", edit: func(c *Config) { c.HEP.Enabled, c.HEP.Collector, c.HEP.CaptureID = true, "h:1", -1 }, want: "hep.capture_id"},
		{name: "mqtt without broker", edit: func(c *Config) { c.MQTT.Enabled = true }, want: "mqtt.broker"},
		{name: "mqtt unknown scheme", edit: func(c *Config) { c.MQTT.Enabled, c.MQTT.Broker = true, "http://b:1883" }, want: "mqtt.broker"},
		{name: "mqtt wildcard box", edit: func(c *Config) { c.MQTT.Enabled, c.MQTT.Broker, c.MQTT.Box = true, "mqtt://b:1883", "a/#" }, want: "mqtt.topic_prefix"},
		{name: "mqtt interval", edit: func(c *Config) { c.MQTT.Enabled, c.MQTT.Broker, c.MQTT.Interval = true, "mqtt://b:1883", "10ms" }, want: "mqtt.interval"},
		{name: "mqtt queue", edit: func(c *Config) { c.MQTT.Enabled, c.MQTT.Broker, c.MQTT.QueueMessages = true, "mqtt://b:1883", 0 }, want: "mqtt.queue_messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.edit(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %s", err, tc.want)
			}
		})
	}
}

func TestFleetTablesLoad(t *testing.T) {
	c, err := Load(write(t, `[status]
listen = ["127.0.0.1:9000"]
metrics = false
[hep]
enabled = true
collector = "127.0.0.1:9060"
capture_id = 7
rtcp = false
[mqtt]
enabled = true
broker = "mqtt://127.0.0.1:1883"
box = "truck-17"
interval = "30s"
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Status.Metrics || c.HEP.CaptureID != 7 || c.HEP.RTCP || c.HEP.QueuePackets == 0 || c.MQTT.Box != "truck-17" || c.MQTT.IntervalDuration().Seconds() != 30 || c.MQTT.QueueMessages == 0 {
		t.Errorf("loaded %+v %+v %+v", c.Status, c.HEP, c.MQTT)
	}
}
