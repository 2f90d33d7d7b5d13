package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/hep"
	"fieldtap/services/mqttpub"
)

// Status page defaults (docs/fleet.md).
const (
	// DefaultStatusListen serves the page and /metrics on loopback only.
	DefaultStatusListen = "127.0.0.1:8732"
	// GadgetHost in a status.listen address stands for the board's USB
	// gadget address (its profile's [gadget] address).
	GadgetHost = "gadget"
)

// Exporter defaults.
const (
	DefaultHEPCaptureID = 2001 // HOMER's example agent id; set one per box
	DefaultMQTTPrefix   = "fieldtap"
)

// Status is the [status] table: the tech's page, its JSON and /metrics.
type Status struct {
	// Listen holds host:port addresses; "gadget:8732" is the board's
	// gadget address. Empty turns the page and /metrics off.
	Listen []string `toml:"listen"`
	// Metrics serves Prometheus /metrics beside the page.
	Metrics bool `toml:"metrics"`
}

// HEP is the [hep] table: SIP and RTCP to a HOMER-compatible collector.
type HEP struct {
	Enabled bool `toml:"enabled"`
	// Collector is the collector's UDP host:port.
	Collector string `toml:"collector"`
	CaptureID int    `toml:"capture_id"`
	// Password is the collector's HEP auth key, when it wants one.
	Password string `toml:"password"`
	// Node names the box in chunk 0x0013; empty sends none.
	Node string `toml:"node"`
	// RTCP also exports RTCP reports with their Call-ID.
	RTCP         bool `toml:"rtcp"`
	QueuePackets int  `toml:"queue_packets"`
	QueueBytes   int  `toml:"queue_bytes"`
}

// MQTT is the [mqtt] table: state, faults and calls to a broker.
type MQTT struct {
	Enabled bool   `toml:"enabled"`
	Broker  string `toml:"broker"`
	// Box names the box in topics (<topic_prefix>/<box>/…) and is the
	// client id; empty takes the host name.
	Box          string `toml:"box"`
	TopicPrefix  string `toml:"topic_prefix"`
	Username     string `toml:"username"`
	PasswordFile string `toml:"password_file"`
	// Interval is how often state is published and the stores read.
	Interval      string `toml:"interval"`
	KeepAlive     string `toml:"keep_alive"`
	QueueMessages int    `toml:"queue_messages"`
	QueueBytes    int    `toml:"queue_bytes"`
}

// DefaultStatus, DefaultHEP and DefaultMQTT are the tables' defaults:
// the page on loopback, both exporters off.
func DefaultStatus() Status { return Status{Listen: []string{DefaultStatusListen}, Metrics: true} }

// DefaultHEP is the [hep] default.
func DefaultHEP() HEP {
	return HEP{CaptureID: DefaultHEPCaptureID, RTCP: true, QueuePackets: hep.DefaultQueuePackets, QueueBytes: hep.DefaultQueueBytes}
}

// DefaultMQTT is the [mqtt] default.
func DefaultMQTT() MQTT {
	return MQTT{TopicPrefix: DefaultMQTTPrefix, Interval: mqttpub.DefaultInterval.String(), KeepAlive: mqttpub.DefaultKeepAlive.String(),
		QueueMessages: mqttpub.DefaultQueueMessages, QueueBytes: mqttpub.DefaultQueueBytes}
}

// IntervalDuration and KeepAliveDuration parse the durations; Validate
// has checked them.
func (m MQTT) IntervalDuration() time.Duration { d, _ := time.ParseDuration(m.Interval); return d }

// KeepAliveDuration is the MQTT keep-alive.
func (m MQTT) KeepAliveDuration() time.Duration { d, _ := time.ParseDuration(m.KeepAlive); return d }

// validate checks [status]: like the MCP endpoint, anything but
// loopback needs the tokens file, since the cable reaches the box from
// laptops nobody vetted.
func (s Status) validate(tokens bool) []error {
	var errs []error
	seen := map[string]bool{}
	for _, a := range s.Listen {
		host, port, err := net.SplitHostPort(a)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("status.listen %q: %w", a, err))
			continue
		case port == "":
			errs = append(errs, fmt.Errorf("status.listen %q: no port", a))
		case seen[a]:
			errs = append(errs, fmt.Errorf("status.listen %q: listed twice", a))
		}
		seen[a] = true
		if !tokens && (host == GadgetHost || !isLoopback(host)) {
			errs = append(errs, fmt.Errorf("status.listen %q is not loopback: set mcp.tokens_file first (the page takes the same tokens)", a))
		}
	}
	return errs
}

func (h HEP) validate() []error {
	if !h.Enabled {
		return nil
	}
	var errs []error
	if _, _, err := net.SplitHostPort(h.Collector); err != nil || h.Collector == "" {
		errs = append(errs, fmt.Errorf("hep.collector %q: want host:port of the collector's UDP socket", h.Collector))
	}
	if h.CaptureID < 0 || int64(h.CaptureID) > math.MaxUint32 {
		errs = append(errs, fmt.Errorf("hep.capture_id %d: want 0 to %d", h.CaptureID, uint32(math.MaxUint32)))
	}
	if h.QueuePackets < 1 || h.QueuePackets > hep.MaxQueuePackets {
		errs = append(errs, fmt.Errorf("hep.queue_packets %d: want 1 to %d", h.QueuePackets, hep.MaxQueuePackets))
	}
	if h.QueueBytes < wire.HEPMaxPacket || h.QueueBytes > hep.MaxQueueBytes {
		errs = append(errs, fmt.Errorf("hep.queue_bytes %d: want %d (one packet) to %d", h.QueueBytes, wire.HEPMaxPacket, hep.MaxQueueBytes))
	}
	return errs
}

func (m MQTT) validate() []error {
	if !m.Enabled {
		return nil
	}
	var errs []error
	if u, err := url.Parse(m.Broker); err != nil || u.Host == "" || u.Port() == "" || !slices.Contains(mqttpub.Schemes, u.Scheme) {
		errs = append(errs, fmt.Errorf("mqtt.broker %q: want mqtt://host:port (or %s)", m.Broker, strings.Join(mqttpub.Schemes[1:], ", ")))
	}
	if strings.ContainsAny(m.TopicPrefix+m.Box, "#+") || strings.HasSuffix(m.TopicPrefix, "/") || m.TopicPrefix == "" || strings.Contains(m.Box, "/") {
		errs = append(errs, fmt.Errorf("mqtt.topic_prefix %q and mqtt.box %q: want topic levels without wildcards", m.TopicPrefix, m.Box))
	}
	if d, err := time.ParseDuration(m.Interval); err != nil || d < mqttpub.MinInterval {
		errs = append(errs, fmt.Errorf("mqtt.interval %q: want a duration of at least %v", m.Interval, mqttpub.MinInterval))
	}
	if d, err := time.ParseDuration(m.KeepAlive); err != nil || d < time.Second || d > time.Hour {
		errs = append(errs, fmt.Errorf("mqtt.keep_alive %q: want 1s to 1h", m.KeepAlive))
	}
	if m.QueueMessages < 1 || m.QueueMessages > mqttpub.MaxQueueMessages {
		errs = append(errs, fmt.Errorf("mqtt.queue_messages %d: want 1 to %d", m.QueueMessages, mqttpub.MaxQueueMessages))
	}
	if m.QueueBytes < 1024 || m.QueueBytes > mqttpub.MaxQueueBytes {
		errs = append(errs, fmt.Errorf("mqtt.queue_bytes %d: want 1024 to %d", m.QueueBytes, mqttpub.MaxQueueBytes))
	}
	return errs
}
