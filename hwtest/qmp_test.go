package hwtest

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

const (
	// qmpDeadline bounds one QMP exchange.
	qmpDeadline = 10 * time.Second
	// armHoldEvery is how often holdArm presses QEMU's power button. Each
	// press drives PL061 line 3 high and restarts QEMU's gpio-key timer,
	// which lowers it again 100 ms later (GPIO_KEY_LATENCY in
	// hw/gpio/gpio_key.c), so presses closer than that hold it high.
	armHoldEvery = 40 * time.Millisecond
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
	if err := q.run("qmp_capabilities"); err != nil {
		c.Close()
		return nil, err
	}
	return q, nil
}

// run sends one command and waits for its return, skipping events.
func (q *qmpConn) run(cmd string) error {
	_ = q.c.SetDeadline(time.Now().Add(qmpDeadline))
	fmt.Fprintf(q.c, "{\"execute\":%q}\n", cmd)
	for {
		line, err := q.r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("qmp %s: %w", cmd, err)
		}
		if strings.Contains(line, `"error"`) {
			return fmt.Errorf("qmp %s: %s", cmd, line)
		}
		if strings.Contains(line, `"return"`) {
			return nil
		}
	}
}

func (q *qmpConn) close() { q.c.Close() }

// holdArm keeps the arm input on, as a person holding the key would,
// until the returned release is called; release reports how many presses
// it took and the first QMP error, if any.
func (b *board) holdArm(t *testing.T) (release func() (int, error)) {
	t.Helper()
	q, err := dialQMP(b.qmpPath)
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	var presses int
	var qerr error
	go func() {
		defer close(done)
		tick := time.NewTicker(armHoldEvery)
		defer tick.Stop()
		for {
			if err := q.run("system_powerdown"); err != nil {
				qerr = err
				return
			}
			presses++
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (int, error) {
		close(stop)
		<-done
		q.close()
		return presses, qerr
	}
}
