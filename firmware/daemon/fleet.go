package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"fieldtap/firmware/config"
	"fieldtap/mcp/audit"
	"fieldtap/mcp/front"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/hep"
	"fieldtap/services/metrics"
	"fieldtap/services/mqttpub"
	"fieldtap/services/statuspage"
)

// startHEP attaches the HEP exporter to the SPAN analyser: before any
// port runs, so no message is fed while the hooks change. Off (nil) by
// default, and then the analyser carries no hook at all.
func startHEP(ctx context.Context, c config.HEP, an *analysers, wg *sync.WaitGroup, log *slog.Logger) (*hep.Exporter, error) {
	if !c.Enabled {
		return nil, nil
	}
	exp, err := hep.New(hep.Options{Collector: c.Collector, CaptureID: uint32(c.CaptureID), AuthKey: c.Password, Node: c.Node,
		RTCP: c.RTCP, QueuePackets: c.QueuePackets, QueueBytes: c.QueueBytes, Log: log})
	if err != nil {
		return nil, err
	}
	an.sipFeed.SetTap(exp)
	if c.RTCP {
		an.sipFeed.SetMediaHook(&hep.Tee{Next: an.media, Calls: an.media, Exp: exp})
	}
	wg.Add(1)
	go func() { defer wg.Done(); exp.Run(ctx) }()
	return exp, nil
}

// startMQTT runs the publisher and its feeder in the exporters' group;
// the publisher's last act is the offline status.
func (b *box) startMQTT(src statuspage.Sources) (*mqttpub.Publisher, error) {
	c := b.cfg.MQTT
	if !c.Enabled {
		return nil, nil
	}
	name := c.Box
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("mqtt.box is empty and the host name is unknown: %w", err)
		}
		name = h
	}
	var password []byte
	if c.PasswordFile != "" {
		pw, err := os.ReadFile(c.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("mqtt.password_file: %w", err)
		}
		password = []byte(strings.TrimSpace(string(pw)))
	}
	pub, err := mqttpub.New(mqttpub.Options{Broker: c.Broker, ClientID: "fieldtap-" + name, Prefix: c.TopicPrefix + "/" + name,
		Username: c.Username, Password: password, KeepAlive: c.KeepAliveDuration(), QueueMessages: c.QueueMessages, QueueBytes: c.QueueBytes,
		Online: map[string]string{"box": name, "board": b.cfg.Board, "version": b.version}, Log: b.log})
	if err != nil {
		return nil, err
	}
	feeder := mqttpub.NewFeeder(pub, mqttpub.Sources{
		Status: func() statuspage.Status { return statuspage.Build(src, time.Now()) },
		J1939:  b.an.j1939, J1587: b.an.j1587, Calls: b.an.sip, Media: b.an.media,
		Fence: func(s string) string { return untrusted.Fence(s, false) },
	})
	ctx, wg := b.fleet.ctx, &b.fleet.wg
	feedCtx, stopFeed := context.WithCancel(ctx)
	wg.Add(2)
	go func() { defer wg.Done(); feeder.Run(feedCtx, c.IntervalDuration()) }()
	go func() {
		defer wg.Done()
		defer stopFeed()
		if err := pub.Run(ctx); err != nil {
			b.log.Error("mqtt publisher stopped", "err", err)
		}
	}()
	b.log.Info("publishing to MQTT", "broker", c.Broker, "prefix", c.TopicPrefix+"/"+name)
	return pub, nil
}

// hepStats and mqttStats adapt the exporters to the metrics endpoint.
type hepStats struct{ e *hep.Exporter }

func (h hepStats) ExporterStats() metrics.ExporterStats {
	s := h.e.Stats()
	return metrics.ExporterStats{Name: "hep", Sent: s.Sent, SentBytes: s.SentBytes, Dropped: s.Dropped,
		Queued: s.Queued, QueuedBytes: s.QueuedBytes, Connected: s.Connected}
}

type mqttStats struct{ p *mqttpub.Publisher }

func (m mqttStats) ExporterStats() metrics.ExporterStats {
	s := m.p.Stats()
	return metrics.ExporterStats{Name: "mqtt", Sent: s.Sent, SentBytes: s.SentBytes,
		Dropped: map[string]uint64{"queue_full": s.Dropped, "too_large": s.TooLarge, "refused": s.Refused},
		Queued:  s.Queued, QueuedBytes: int64(s.QueuedBytes), Connected: s.Connected}
}

// connStats reports the HTTP connection pool to the metrics.
type connStats struct{ p *front.ConnPool }

func (c connStats) ConnStats() metrics.ConnStats {
	s := c.p.Stats()
	return metrics.ConnStats{Open: s.Open, Max: s.Max, RefusedPerAddress: s.RefusedPerAddress, RefusedGlobal: s.RefusedGlobal, ClosedIdle: s.ClosedIdle}
}

// mcpCounters reports the MCP audit file's records and the calls by tool
// to the metrics.
type mcpCounters struct {
	a *audit.Log
	c *audit.CallCounts
}

func (m mcpCounters) AuditRecords() uint64 { return m.a.Records() }

func (m mcpCounters) ToolCalls() []metrics.ToolCalls {
	calls := m.c.Calls()
	out := make([]metrics.ToolCalls, len(calls))
	for i, c := range calls {
		out[i] = metrics.ToolCalls{Tool: c.Tool, Outcome: c.Outcome, Calls: c.Calls}
	}
	return out
}

// serveStatus serves the page, its JSON and /metrics on every
// status.listen address in the exporters' group, behind the MCP front
// door. An address that cannot be opened is logged and skipped: the page
// is for people, and the box keeps capturing without it.
func (b *box) serveStatus(page http.Handler, metricsH http.Handler) {
	c, gadget, log := b.cfg, b.hw.gadget, b.log
	ctx, wg := b.fleet.ctx, &b.fleet.wg
	if len(c.Status.Listen) == 0 {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/", page)
	if metricsH != nil {
		mux.Handle("GET /metrics", metricsH)
	}
	hosts := append([]string{}, c.MCP.AllowedHosts...)
	var addrs []string
	for _, a := range c.Status.Listen {
		host, port, _ := net.SplitHostPort(a) // Validate checked it
		if host == config.GadgetHost {
			if gadget == "" {
				log.Error("status page not served on the gadget", "listen", a, "reason", "this board has no gadget address")
				continue
			}
			host, a = gadget, net.JoinHostPort(gadget, port)
		}
		if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
			hosts = append(hosts, host)
		}
		addrs = append(addrs, a)
	}
	h := front.Protect(front.HTTPOptions{Tokens: b.access.tokens, AllowedHosts: hosts, Log: log}, mux)
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			log.Error("status page not served", "listen", a, "err", err)
			continue
		}
		// The MCP endpoint's bounds (httpserve.go): a page client holds a
		// connection no longer than an MCP one.
		hs := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes,
			ConnState: b.conns.ConnState, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		log.Info("serving the status page", "page", "http://"+ln.Addr().String()+statuspage.PagePath, "metrics", metricsH != nil)
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := hs.Serve(b.conns.Listener(ln)); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("status page stopped", "listen", a, "err", err)
			}
		}()
		go func() {
			defer wg.Done()
			<-ctx.Done()
			_ = shutdownWithin(hs, cancelGrace)
		}()
	}
}

// startStatusPage wires the status page, /metrics and the MQTT exporter
// to the stores, the recorder and the transmit service, in the exporters'
// group: it has no stop of its own, since the exporters' stop, after the
// ports', ends them.
func (b *box) startStatusPage(context.Context) (func() error, error) {
	src := statuspage.Sources{Version: b.version, Board: b.cfg.Board, Started: time.Now(), Ports: &b.reg, ArmedLED: b.hw.led.state,
		Transmit: b.tx, CAN: b.an.can, J1939: b.an.j1939, J1587: b.an.j1587, Calls: b.an.sip, Media: b.an.media, NoRecorder: b.rec.why}
	if b.rec.rec != nil { // a nil *Recorder in the interface would not read as none
		src.Recorder = b.rec.rec
	}
	if b.rules != nil { // likewise a nil *Engine
		src.Rules = b.rules
	}
	// The page's frames per second read the counters' samples.
	src.Rates = statuspage.NewRates()
	b.fleet.wg.Go(func() { statuspage.RunRates(b.fleet.ctx, src.Rates, &b.reg) })
	pub, err := b.startMQTT(src)
	if err != nil {
		return nil, err
	}
	b.mqtt = pub
	var metricsH http.Handler
	if b.cfg.Status.Metrics {
		ms := metrics.Sources{Ports: &b.reg, CAN: b.an.can, SIP: b.an.sip, Transmit: b.tx, Outcomes: b.outcomes, Conns: connStats{b.conns}}
		if b.rec.rec != nil {
			ms.Recorder = b.rec.rec
		}
		if b.access.audit != nil {
			ms.MCP = mcpCounters{b.access.audit, b.access.counts}
		}
		if b.rules != nil { // a nil *Engine in the interface would not read as none
			ms.Rules = b.rules
		}
		if b.hep != nil {
			ms.Exporters = append(ms.Exporters, hepStats{b.hep})
		}
		if pub != nil {
			ms.Exporters = append(ms.Exporters, mqttStats{pub})
		}
		metricsH = metrics.Handler(ms)
	}
	b.serveStatus(statuspage.Handler(src, time.Now), metricsH)
	return nil, nil
}
