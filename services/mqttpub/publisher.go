package mqttpub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

// Publisher bounds and timings.
const (
	// DefaultQueueMessages holds a state, every fault topic of a busy
	// truck and a few minutes of call summaries while the broker is away.
	DefaultQueueMessages = 256
	// DefaultQueueBytes bounds the same queue in memory: 256 KiB.
	DefaultQueueBytes = 256 << 10
	// MaxQueueMessages and MaxQueueBytes keep a configuration from
	// spending the board's memory on a broker that is away.
	MaxQueueMessages = 1 << 16
	MaxQueueBytes    = 16 << 20
	// DefaultKeepAlive is the MQTT keep-alive: the broker fires the will
	// within 1.5 keep-alives of a box that vanished without a TCP close.
	DefaultKeepAlive = 30 * time.Second
	// reconnect is the wait between connection attempts.
	reconnect = 5 * time.Second
	// publishTimeout bounds one QoS 1 publication's wait for its PUBACK.
	publishTimeout = 10 * time.Second
	// shutdownGrace bounds the offline notice and DISCONNECT on stop.
	shutdownGrace = 2 * time.Second
	// retryWait is the pause after a failed publication, while the
	// connection manager notices a lost connection.
	retryWait = time.Second
	// qos is at-least-once: the queue resends what got no PUBACK.
	qos = 1
)

// Schemes are the broker URL schemes accepted: plain TCP, and TLS with
// the system's CA roots (autopaho's names for each).
var Schemes = []string{"mqtt", "tcp", "tls", "mqtts"}

// Topic suffixes under the prefix.
const (
	TopicStatus = "status"
	TopicState  = "state"
	TopicCalls  = "calls"
	TopicFaults = "faults"
)

// Options configure a Publisher.
type Options struct {
	// Broker is mqtt://host:port (or tcp://, tls://, mqtts://).
	Broker   string
	ClientID string
	// Prefix is every topic's prefix, such as fieldtap/truck-17.
	Prefix        string
	Username      string
	Password      []byte
	KeepAlive     time.Duration // 0: DefaultKeepAlive
	QueueMessages int           // 0: DefaultQueueMessages
	QueueBytes    int           // 0: DefaultQueueBytes
	// Online is what the status topic carries while the box is up,
	// besides "online": true.
	Online map[string]string
	Log    *slog.Logger
}

func (o *Options) check() (*url.URL, error) {
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.QueueMessages == 0 {
		o.QueueMessages = DefaultQueueMessages
	}
	if o.QueueBytes == 0 {
		o.QueueBytes = DefaultQueueBytes
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	var errs []error
	u, err := url.Parse(o.Broker)
	if err != nil || u.Host == "" || u.Port() == "" || !slices.Contains(Schemes, u.Scheme) {
		errs = append(errs, fmt.Errorf("mqtt: broker %q: want mqtt://host:port (or tls://, with the system's CA roots)", o.Broker))
	}
	switch {
	case o.ClientID == "":
		errs = append(errs, errors.New("mqtt: no client id"))
	case o.Prefix == "" || strings.ContainsAny(o.Prefix, "#+") || strings.HasSuffix(o.Prefix, "/"):
		errs = append(errs, fmt.Errorf("mqtt: topic prefix %q: want a topic with no wildcard and no trailing /", o.Prefix))
	}
	if o.KeepAlive < time.Second || o.KeepAlive > time.Hour {
		errs = append(errs, fmt.Errorf("mqtt: keep-alive %v: want 1s to 1h", o.KeepAlive))
	}
	if o.QueueMessages < 1 || o.QueueMessages > MaxQueueMessages {
		errs = append(errs, fmt.Errorf("mqtt: queue_messages %d: want 1 to %d", o.QueueMessages, MaxQueueMessages))
	}
	if o.QueueBytes < 1024 || o.QueueBytes > MaxQueueBytes {
		errs = append(errs, fmt.Errorf("mqtt: queue_bytes %d: want 1024 to %d", o.QueueBytes, MaxQueueBytes))
	}
	return u, errors.Join(errs...)
}

// Stats are the publisher's counters.
type Stats struct {
	Sent          uint64 `json:"sent"`
	SentBytes     uint64 `json:"sent_bytes"`
	Dropped       uint64 `json:"dropped"`        // oldest dropped while the queue was full
	TooLarge      uint64 `json:"too_large"`      // larger than the queue's byte bound
	Refused       uint64 `json:"refused"`        // the broker's PUBACK refused it
	Superseded    uint64 `json:"superseded"`     // retained state replaced before it was sent
	PublishErrors uint64 `json:"publish_errors"` // attempts that failed and were retried
	Queued        int    `json:"queued"`
	QueuedBytes   int    `json:"queued_bytes"`
	Connected     bool   `json:"connected"`
	Connects      uint64 `json:"connects"`
}

// Publisher owns the broker connection and the queue.
type Publisher struct {
	o  Options
	u  *url.URL
	q  *queue
	up atomic.Bool
	// announce is set on every connection: drain publishes the online
	// status before the queue, so it never displaces a queued message.
	announce atomic.Bool
	st       struct{ sent, sentBytes, errs, connects atomic.Uint64 }
}

// New checks o; Run connects.
func New(o Options) (*Publisher, error) {
	u, err := o.check()
	if err != nil {
		return nil, err
	}
	return &Publisher{o: o, u: u, q: newQueue(o.QueueMessages, o.QueueBytes)}, nil
}

// Publish queues payload on prefix/topic. It never blocks: a full queue
// drops its oldest message.
func (p *Publisher) Publish(topic string, payload []byte, retain bool) {
	p.q.push(p.o.Prefix+"/"+topic, payload, retain)
}

// Stats returns the counters.
func (p *Publisher) Stats() Stats {
	n, b := p.q.len()
	p.q.mu.Lock()
	s := Stats{Dropped: p.q.dropped, TooLarge: p.q.tooLarge, Refused: p.q.refusedByBroker, Superseded: p.q.superseded}
	p.q.mu.Unlock()
	s.Sent, s.SentBytes, s.PublishErrors, s.Connects = p.st.sent.Load(), p.st.sentBytes.Load(), p.st.errs.Load(), p.st.connects.Load()
	s.Queued, s.QueuedBytes, s.Connected = n, b, p.up.Load()
	return s
}

func (p *Publisher) status(online bool) []byte {
	m := map[string]any{"online": online}
	for k, v := range p.o.Online {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

// Run keeps the connection and drains the queue until ctx ends, then
// publishes the offline status and disconnects (a clean DISCONNECT, so
// the broker discards the will).
func (p *Publisher) Run(ctx context.Context) error {
	connCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	cm, err := autopaho.NewConnection(connCtx, autopaho.ClientConfig{
		ServerUrls:                    []*url.URL{p.u},
		KeepAlive:                     uint16(p.o.KeepAlive / time.Second),
		CleanStartOnInitialConnection: true,
		ReconnectBackoff:              autopaho.NewConstantBackoff(reconnect),
		ConnectTimeout:                publishTimeout,
		ConnectUsername:               p.o.Username,
		ConnectPassword:               p.o.Password,
		WillMessage:                   &paho.WillMessage{Topic: p.o.Prefix + "/" + TopicStatus, Payload: p.status(false), QoS: qos, Retain: true},
		WillProperties:                &paho.WillProperties{},
		OnConnectionUp: func(*autopaho.ConnectionManager, *paho.Connack) {
			p.up.Store(true)
			p.st.connects.Add(1)
			p.o.Log.Info("mqtt connected", "broker", p.u.Redacted())
			p.announce.Store(true)
			p.q.wake()
		},
		OnConnectionDown: func() bool {
			p.up.Store(false)
			p.o.Log.Warn("mqtt connection lost; queueing", "broker", p.u.Redacted())
			return true
		},
		OnConnectError: func(err error) { p.o.Log.Debug("mqtt connect failed", "broker", p.u.Redacted(), "err", err) },
		ClientConfig:   paho.ClientConfig{ClientID: p.o.ClientID},
	})
	if err != nil {
		return fmt.Errorf("mqtt: %w", err)
	}
	p.drain(ctx, cm)
	p.up.Store(false)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if _, err := cm.Publish(sctx, &paho.Publish{Topic: p.o.Prefix + "/" + TopicStatus, Payload: p.status(false), QoS: qos, Retain: true}); err != nil {
		p.o.Log.Warn("mqtt offline notice not sent; the broker's will says it", "err", err)
	}
	return cm.Disconnect(sctx)
}

// drain sends the online status after each connection, then the
// queue's head, until ctx ends. A message that fails is retried once
// the connection is back; one the broker refuses is dropped and counted.
func (p *Publisher) drain(ctx context.Context, cm *autopaho.ConnectionManager) {
	for {
		m, ok := p.q.head()
		if p.announce.Load() {
			m, ok = message{topic: p.o.Prefix + "/" + TopicStatus, payload: p.status(true), retain: true}, true
		}
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-p.q.ready:
			}
			continue
		}
		if err := cm.AwaitConnection(ctx); err != nil {
			return
		}
		// While the broker was away the queue may have dropped the head
		// taken before the wait: send what it holds now.
		if m.seq != 0 {
			if m, ok = p.q.head(); !ok {
				continue
			}
		}
		pctx, cancel := context.WithTimeout(ctx, publishTimeout)
		res, err := cm.Publish(pctx, &paho.Publish{Topic: m.topic, Payload: m.payload, QoS: qos, Retain: m.retain})
		cancel()
		switch {
		case err == nil:
			if m.seq == 0 {
				p.announce.Store(false)
			} else {
				p.q.done(m)
			}
			p.st.sent.Add(1)
			p.st.sentBytes.Add(uint64(m.size()))
		case res != nil && res.ReasonCode >= 0x80:
			p.o.Log.Warn("mqtt broker refused a message", "topic", m.topic, "reason", res.ReasonCode)
			if m.seq == 0 {
				p.announce.Store(false)
			} else {
				p.q.refuse(m)
			}
		default:
			p.st.errs.Add(1)
			select { // the connection manager notices the loss; wait for it
			case <-ctx.Done():
				return
			case <-time.After(retryWait):
			}
		}
	}
}
