// Package mqtttest runs Debian's Mosquitto for tests, on loopback, and
// subscribes to it with a persistent session, so a test can stop and
// restart the broker and still read what was published meanwhile.
package mqtttest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// giveUp bounds the waits for the broker; it is not a speed assertion.
const giveUp = 30 * time.Second

// brokerUser is who Debian's mosquitto runs as when started by root.
const brokerUser = "mosquitto"

// Broker is one mosquitto process and its configuration.
type Broker struct {
	t      testing.TB
	dir    string
	Port   int
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd was waited for
	log    *syncBuffer
}

// syncBuffer is the broker's stderr: exec's copying goroutine writes it
// while the test may read it (Log, a failure message).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Start runs mosquitto on 127.0.0.1 at a free port with persistence in
// a temporary folder, or skips the test when mosquitto is not installed.
func Start(t testing.TB) *Broker {
	t.Helper()
	if _, err := exec.LookPath("mosquitto"); err != nil {
		if _, err := os.Stat("/usr/sbin/mosquitto"); err != nil {
			t.Skip("mosquitto not installed (Debian package mosquitto; .ci/run installs it)")
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// Not t.TempDir: its parent is private to root, and mosquitto drops
	// root for its own user, which must own the folder to save sessions.
	dir, err := os.MkdirTemp("", "mqtttest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup(brokerUser)
		if err != nil {
			t.Fatalf("running as root, mosquitto would run as %s, who does not exist: %v", brokerUser, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	conf := fmt.Sprintf("listener %d 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location %s/\nautosave_interval 0\nlog_dest stderr\nlog_type error\nlog_type warning\nlog_type notice\n", port, dir)
	if err := os.WriteFile(filepath.Join(dir, "mosquitto.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &Broker{t: t, dir: dir, Port: port}
	b.Restart()
	t.Cleanup(b.Stop)
	return b
}

// URL is the broker's address for a client.
func (b *Broker) URL() string { return "mqtt://127.0.0.1:" + strconv.Itoa(b.Port) }

// Restart starts the broker again (after Stop) and waits for its port.
func (b *Broker) Restart() {
	b.t.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		bin = "/usr/sbin/mosquitto"
	}
	b.log = &syncBuffer{}
	b.cmd = exec.Command(bin, "-c", filepath.Join(b.dir, "mosquitto.conf"))
	b.cmd.Dir = b.dir // not the checkout, which the broker's user may not reach
	b.cmd.Stderr = b.log
	if err := b.cmd.Start(); err != nil {
		b.t.Fatalf("start mosquitto: %v", err)
	}
	exited := make(chan struct{})
	b.exited = exited
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); close(exited) }(b.cmd)
	deadline := time.Now().Add(giveUp)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(b.Port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-exited: // it says why: a folder it cannot use, a port taken
			b.t.Fatalf("mosquitto exited before listening on %d (%v):\n%s", b.Port, b.cmd.ProcessState, b.log)
		default:
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("mosquitto never listened on %d: %v\n%s", b.Port, err, b.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Log is what the broker wrote to stderr since its last start.
func (b *Broker) Log() string { return b.log.String() }

// Stop ends the broker with SIGINT (it saves its sessions) and waits.
func (b *Broker) Stop() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	_ = b.cmd.Process.Signal(os.Interrupt)
	<-b.exited
	b.cmd = nil
}

// Message is one publication a Subscriber received.
type Message struct {
	Topic   string
	Payload []byte
	Retain  bool
}

// Subscriber is a QoS 1 subscription on a persistent session, with
// retain flags as published (so a test sees which topics are retained):
// messages published while it is away arrive when it reconnects.
type Subscriber struct {
	t      testing.TB
	b      *Broker
	id     string
	filter string
	mu     sync.Mutex
	got    []Message
	c      *paho.Client
}

// Subscribe connects as a fresh persistent session and subscribes to filter.
func (b *Broker) Subscribe(filter string) *Subscriber {
	b.t.Helper()
	s := &Subscriber{t: b.t, b: b, id: fmt.Sprintf("mqtttest-%d", time.Now().UnixNano()), filter: filter}
	s.connect(true)
	b.t.Cleanup(s.close)
	return s
}

// Reconnect resumes the session after the broker restarted, and
// subscribes again in case the broker did not keep it.
func (s *Subscriber) Reconnect() {
	s.t.Helper()
	s.close()
	s.connect(false)
}

func (s *Subscriber) connect(fresh bool) {
	s.t.Helper()
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.b.Port), giveUp)
	if err != nil {
		s.t.Fatal(err)
	}
	c := paho.NewClient(paho.ClientConfig{Conn: conn, ClientID: s.id, OnPublishReceived: []func(paho.PublishReceived) (bool, error){
		func(pr paho.PublishReceived) (bool, error) {
			s.mu.Lock()
			s.got = append(s.got, Message{Topic: pr.Packet.Topic, Payload: bytes.Clone(pr.Packet.Payload), Retain: pr.Packet.Retain})
			s.mu.Unlock()
			return true, nil
		}}})
	expiry := uint32(3600)
	ctx, cancel := context.WithTimeout(context.Background(), giveUp)
	defer cancel()
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: s.id, CleanStart: fresh, KeepAlive: 30, Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}}); err != nil {
		s.t.Fatalf("subscriber connect: %v", err)
	}
	{ // again on a resumed session: the broker may have lost it
		if _, err := c.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: s.filter, QoS: 1, RetainAsPublished: true}}}); err != nil {
			s.t.Fatalf("subscribe %s: %v", s.filter, err)
		}
	}
	s.c = c
}

func (s *Subscriber) close() {
	if s.c != nil {
		_ = s.c.Disconnect(&paho.Disconnect{})
		s.c = nil
	}
}

// Wait returns the messages received once cond holds for them, or fails
// the test after a generous deadline.
func (s *Subscriber) Wait(what string, cond func([]Message) bool) []Message {
	s.t.Helper()
	deadline := time.Now().Add(giveUp)
	for {
		s.mu.Lock()
		got := append([]Message(nil), s.got...)
		s.mu.Unlock()
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("waited %v for %s; received %d messages: %v", giveUp, what, len(got), topics(got))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func topics(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Topic+"="+string(m.Payload))
	}
	return out
}
