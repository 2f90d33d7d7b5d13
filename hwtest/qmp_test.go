package hwtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	fb "fieldtap/board"
)

const (
	// qmpDeadline bounds one QMP or qtest exchange.
	qmpDeadline = 10 * time.Second
	// pl061Base is the virt machine's PL061 (VIRT_GPIO in QEMU's
	// hw/arm/virt.c memmap). Its data register reads at base + mask<<2,
	// each set bit of mask selecting a line, outputs included.
	pl061Base = 0x09030000
)

// qmpConn is a QMP session past its capabilities negotiation.
type qmpConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialQMP(path string) (*qmpConn, error) {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return nil, err
	}
	q := &qmpConn{c: c, r: bufio.NewReader(c)}
	_ = c.SetDeadline(time.Now().Add(qmpDeadline))
	if _, err := q.r.ReadString('\n'); err != nil {
		c.Close()
		return nil, fmt.Errorf("qmp greeting: %w", err)
	}
	if _, err := q.call("qmp_capabilities", nil); err != nil {
		c.Close()
		return nil, err
	}
	return q, nil
}

// call sends one command and returns its "return" value, skipping events.
func (q *qmpConn) call(cmd string, args any) (json.RawMessage, error) {
	_ = q.c.SetDeadline(time.Now().Add(qmpDeadline))
	req := map[string]any{"execute": cmd}
	if args != nil {
		req["arguments"] = args
	}
	b, _ := json.Marshal(req)
	if _, err := q.c.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("qmp %s: %w", cmd, err)
	}
	for {
		line, err := q.r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("qmp %s: %w", cmd, err)
		}
		var m struct {
			Return json.RawMessage `json:"return"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("qmp %s: %s", cmd, m.Error)
		}
		if m.Return != nil {
			return m.Return, nil
		}
	}
}

func (q *qmpConn) close() { q.c.Close() }

// qtest is QEMU's qtest protocol on a socket beside QMP: QMP has no
// command that drives a PL061 input other than line 3 (system_powerdown
// pulses it through the gpio-key device), but qtest's set_irq_in holds any
// input line at a level, and readl reads the GPIO data register, so the
// host sees the LEDs. It runs alongside TCG; only the clock commands need
// the qtest accelerator.
type qtest struct {
	mu    sync.Mutex
	c     net.Conn
	r     *bufio.Reader
	pl061 string // the PL061's QOM path
}

// dialQtest connects and finds the PL061 through QMP's qom-list.
func (b *board) dialQtest() (*qtest, error) {
	q, err := dialQMP(b.qmpPath)
	if err != nil {
		return nil, err
	}
	defer q.close()
	raw, err := q.call("qom-list", map[string]any{"path": "/machine/unattached"})
	if err != nil {
		return nil, err
	}
	var children []struct{ Name, Type string }
	if err := json.Unmarshal(raw, &children); err != nil {
		return nil, err
	}
	path := ""
	for _, ch := range children {
		if ch.Type == "child<pl061>" {
			path = "/machine/unattached/" + ch.Name
		}
	}
	if path == "" {
		return nil, fmt.Errorf("qom-list /machine/unattached names no pl061")
	}
	c, err := net.DialTimeout("unix", b.qtestPath, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &qtest{c: c, r: bufio.NewReader(c), pl061: path}, nil
}

// cmd sends one qtest line and returns the text after "OK".
func (q *qtest) cmd(line string) (string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	_ = q.c.SetDeadline(time.Now().Add(qmpDeadline))
	if _, err := fmt.Fprintf(q.c, "%s\n", line); err != nil {
		return "", err
	}
	for {
		reply, err := q.r.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("qtest %q: %w", line, err)
		}
		reply = strings.TrimSpace(reply)
		switch {
		case reply == "OK" || strings.HasPrefix(reply, "OK "):
			return strings.TrimSpace(strings.TrimPrefix(reply, "OK")), nil
		case strings.HasPrefix(reply, "FAIL") || strings.HasPrefix(reply, "ERR"):
			return "", fmt.Errorf("qtest %q: %s", line, reply)
		}
		// IRQ notifications and the like: not the answer.
	}
}

// setLine holds PL061 input line at high or low, as a key switch does.
func (q *qtest) setLine(line string, high bool) error {
	l, err := fb.ParseLine(line)
	if err != nil {
		return err
	}
	lvl := 0
	if high {
		lvl = 1
	}
	_, err = q.cmd(fmt.Sprintf("set_irq_in %s unnamed-gpio-in %d %d", q.pl061, l.Offset, lvl))
	return err
}

// readLine reads PL061 line's level from the data register.
func (q *qtest) readLine(line string) (bool, error) {
	l, err := fb.ParseLine(line)
	if err != nil {
		return false, err
	}
	mask := uint32(1) << l.Offset
	v, err := q.cmd(fmt.Sprintf("readl 0x%x", pl061Base+mask<<2))
	if err != nil {
		return false, err
	}
	n, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
	if err != nil {
		return false, fmt.Errorf("readl answered %q", v)
	}
	return uint32(n)&mask != 0, nil
}

func (q *qtest) close() { q.c.Close() }

// qt returns the board's qtest connection, made once.
func (b *board) qt(t *testing.T) *qtest {
	t.Helper()
	b.qtOnce.Do(func() { b.qtConn, b.qtErr = b.dialQtest() })
	if b.qtErr != nil {
		t.Fatalf("qtest: %v", b.qtErr)
	}
	return b.qtConn
}

// setArm turns the key switch: PL061 line 4, held over qtest.
func (b *board) setArm(t *testing.T, on bool) {
	t.Helper()
	if err := b.qt(t).setLine(ArmLine, on); err != nil {
		t.Fatal(err)
	}
}

// pressConfirm presses the confirm button: QMP system_powerdown drives
// PL061 line 3 high for 100 ms (GPIO_KEY_LATENCY in hw/gpio/gpio_key.c).
func (b *board) pressConfirm(t *testing.T) {
	t.Helper()
	if err := b.qmp("system_powerdown"); err != nil {
		t.Fatal(err)
	}
}
