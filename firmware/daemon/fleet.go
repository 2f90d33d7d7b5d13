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
	"fieldtap/mcp/auth"
	"fieldtap/mcp/front"
	"fieldtap/services/hep"
	"fieldtap/services/metrics"
	"fieldtap/services/mqttpub"
	"fieldtap/services/ports"
	"fieldtap/services/statuspage"
	"fieldtap/services/transmit"
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

// startMQTT runs the publisher and its feeder until ctx ends; the
// publisher's last act is the offline status.
func startMQTT(ctx context.Context, c config.MQTT, board, version string, src statuspage.Sources, an *analysers, wg *sync.WaitGroup, log *slog.Logger) (*mqttpub.Publisher, error) {
	if !c.Enabled {
		return nil, nil
	}
	box := c.Box
	if box == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("mqtt.box is empty and the host name is unknown: %w", err)
		}
		box = h
	}
	var password []byte
	if c.PasswordFile != "" {
		b, err := os.ReadFile(c.PasswordFile)
		if err != nil {
			return nil, fmt.Errorf("mqtt.password_file: %w", err)
		}
		password = []byte(strings.TrimSpace(string(b)))
	}
	pub, err := mqttpub.New(mqttpub.Options{Broker: c.Broker, ClientID: "fieldtap-" + box, Prefix: c.TopicPrefix + "/" + box,
		Username: c.Username, Password: password, KeepAlive: c.KeepAliveDuration(), QueueMessages: c.QueueMessages, QueueBytes: c.QueueBytes,
		Online: map[string]string{"box": box, "board": board, "version": version}, Log: log})
	if err != nil {
		return nil, err
	}
	feeder := mqttpub.NewFeeder(pub, mqttpub.Sources{
		Status: func() statuspage.Status { return statuspage.Build(src, time.Now()) },
		J1939:  an.j1939, J1587: an.j1587, Calls: an.sip, Media: an.media,
	})
	feedCtx, stopFeed := context.WithCancel(ctx)
	wg.Add(2)
	go func() { defer wg.Done(); feeder.Run(feedCtx, c.IntervalDuration()) }()
	go func() {
		defer wg.Done()
		defer stopFeed()
		if err := pub.Run(ctx); err != nil {
			log.Error("mqtt publisher stopped", "err", err)
		}
	}()
	log.Info("publishing to MQTT", "broker", c.Broker, "prefix", c.TopicPrefix+"/"+box)
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
// status.listen address until ctx ends, behind the MCP front door. An
// address that cannot be opened is logged and skipped: the page is for
// people, and the box keeps capturing without it.
func serveStatus(ctx context.Context, c config.Config, tokens *auth.Tokens, gadget string, page http.Handler, metricsH http.Handler, wg *sync.WaitGroup, log *slog.Logger) {
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
	h := front.Protect(front.HTTPOptions{Tokens: tokens, AllowedHosts: hosts, Log: log}, mux)
	for _, a := range addrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			log.Error("status page not served", "listen", a, "err", err)
			continue
		}
		// The MCP endpoint's bounds (httpserve.go): a page client holds a
		// connection no longer than an MCP one.
		hs := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		log.Info("serving the status page", "page", "http://"+ln.Addr().String()+statuspage.PagePath, "metrics", metricsH != nil)
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := hs.Serve(front.LimitConns(ln, front.DefaultConnsPerAddr, log)); err != nil && !errors.Is(err, http.ErrServerClosed) {
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

// startPage wires the status page, /metrics and the MQTT exporter to
// the stores and the recorder; started is when the box came up.
func startPage(ctx context.Context, cfg config.Config, version string, access mcpAccess, hw hardware, reg *ports.Registry, an *analysers,
	rec *recording, tx *transmit.Service, outcomes *metrics.TransmitCounter, hepExp *hep.Exporter, wg *sync.WaitGroup, log *slog.Logger) error {
	src := statuspage.Sources{Version: version, Board: cfg.Board, Started: time.Now(), Ports: reg, ArmedLED: hw.led.state,
		Transmit: tx, CAN: an.can, J1939: an.j1939, J1587: an.j1587, Calls: an.sip, Media: an.media, NoRecorder: rec.why}
	if rec.rec != nil { // a nil *Recorder in the interface would not read as none
		src.Recorder = rec.rec
	}
	pub, err := startMQTT(ctx, cfg.MQTT, cfg.Board, version, src, an, wg, log)
	if err != nil {
		return err
	}
	page, err := statuspage.NewPage()
	if err != nil {
		return err
	}
	var metricsH http.Handler
	if cfg.Status.Metrics {
		ms := metrics.Sources{Ports: reg, CAN: an.can, SIP: an.sip, Transmit: tx, Outcomes: outcomes}
		if access.audit != nil {
			ms.MCP = mcpCounters{access.audit, access.counts}
		}
		if hepExp != nil {
			ms.Exporters = append(ms.Exporters, hepStats{hepExp})
		}
		if pub != nil {
			ms.Exporters = append(ms.Exporters, mqttStats{pub})
		}
		if metricsH, err = metrics.Handler(ms); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	serveStatus(ctx, cfg, access.tokens, hw.gadget, statuspage.Handler(src, page, time.Now), metricsH, wg, log)
	return nil
}
