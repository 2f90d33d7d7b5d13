package hwtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// markPresses is how many times the marks check presses.
	markPresses = 6
	// markSpacing separates the presses, and markLead and markTail are
	// the ECU's frames before the first and after the last: with
	// markNearMS they leave stretches away from every mark (each
	// 2·near long, a near clear of any mark on both sides), the base
	// rate against which a rolling counter scores nothing.
	markSpacing = 3 * time.Second
	markLead    = 2500 * time.Millisecond
	markTail    = 2500 * time.Millisecond
	markNearMS  = 500
)

// typeWait types line on the guest's console and waits for a console
// line, from then on, that contains want; it returns that line.
func (b *board) typeWait(t *testing.T, line, want string) string {
	t.Helper()
	mark := b.console.size()
	if _, err := fmt.Fprintf(b.keys, "%s\n", line); err != nil {
		t.Fatalf("typing on the guest's console: %v", err)
	}
	for deadline := time.Now().Add(checkGiveUp); ; time.Sleep(20 * time.Millisecond) {
		if got := b.console.since(mark, want); len(got) > 0 {
			return got[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("typed %q: no %q on the console", line, want)
		}
	}
}

// markRows is what_happened's marks over the last ten minutes of the
// box's clock, each with the ports whose timeline shows it: a mark is
// on every port's timeline, so one mark is a row per port.
func markRows(t *testing.T, ctx context.Context, cs *sdk.ClientSession) []string {
	t.Helper()
	text := callText(t, ctx, cs, "what_happened", map[string]any{"window": "-10m+1m", "kinds": []any{"mark"}, "limit": 500})
	var env struct {
		OK    bool `json:"ok"`
		Items []struct {
			Time    string `json:"time"`
			Port    string `json:"port"`
			Kind    string `json:"kind"`
			Summary string `json:"summary"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(text), &env); err != nil || !env.OK {
		t.Fatalf("what_happened: %v %s", err, text)
	}
	var marks []string
	ports := map[string][]string{}
	for _, it := range env.Items {
		if it.Kind != "mark" {
			t.Fatalf("what_happened kinds [mark] answered a %q row: %s", it.Kind, text)
		}
		m := it.Time + " " + it.Summary
		if _, seen := ports[m]; !seen {
			marks = append(marks, m)
		}
		ports[m] = append(ports[m], it.Port)
	}
	for i, m := range marks {
		marks[i] = fmt.Sprintf("%s on %s", m, strings.Join(ports[m], ","))
	}
	return marks
}

// marksCheck is issue 40's emulated-board test of marks: with no plan
// waiting, the host presses the confirm button over QMP markPresses
// times while the guest's simulated ECU (guest ecu on can1, captured on
// can0) toggles one bit just before each press, the control a person
// works and marks. The box must record exactly that many marks (what_happened
// rows of kind mark, and marks.json in the recorder), and can_re_analyse's
// marks analysis on can0 must rank the toggled bit first, and its byte
// first with the rolling counter's byte 0 below it.
func marksCheck(t *testing.T, ctx context.Context, b *board, cs *sdk.ClientSession) {
	t.Helper()
	before := len(markRows(t, ctx, cs))
	b.typeWait(t, "ecu start", ECULine+" started")
	stopped := false
	defer func() {
		if !stopped {
			_, _ = fmt.Fprintf(b.keys, "ecu stop\n")
		}
	}()
	time.Sleep(markLead)
	for i := 1; i <= markPresses; i++ {
		// The bit is on the bus before the press: a person works the
		// control and then marks it.
		b.typeWait(t, "ecu press", fmt.Sprintf("%s press=%d ", ECULine, i))
		b.pressConfirm(t)
		if i < markPresses {
			time.Sleep(markSpacing)
		}
	}
	time.Sleep(markTail)
	line := b.typeWait(t, "ecu stop", ECULine+" stopped")
	stopped = true
	t.Logf("guest: %s", line)

	var rows []string
	for deadline := time.Now().Add(checkGiveUp); ; time.Sleep(250 * time.Millisecond) {
		if rows = markRows(t, ctx, cs); len(rows) >= before+markPresses || time.Now().After(deadline) {
			break
		}
	}
	if got := len(rows) - before; got != markPresses {
		t.Fatalf("what_happened has %d new marks, want %d (one per press): %q", got, markPresses, rows)
	}
	t.Logf("what_happened marks: %s", strings.Join(rows[before:], " | "))

	var journal struct {
		Marks []struct {
			At     time.Time `json:"at"`
			Source string    `json:"source"`
		} `json:"marks"`
		Dropped uint64 `json:"dropped"`
	}
	js := strings.TrimSpace(strings.TrimPrefix(b.typeWait(t, "marks", MarksLine), MarksLine))
	if err := json.Unmarshal([]byte(js), &journal); err != nil {
		t.Fatalf("marks.json: %v: %q", err, js)
	}
	buttons := 0
	for _, m := range journal.Marks {
		if m.Source == "button" {
			buttons++
		}
	}
	if len(journal.Marks) != len(rows) || buttons != len(rows) {
		t.Errorf("marks.json holds %d marks (%d from the button), want the %d what_happened lists, all from the button", len(journal.Marks), buttons, len(rows))
	}
	t.Logf("recorder %s: %d marks, %d from the button, %d dropped", MarksFile, len(journal.Marks), buttons, journal.Dropped)

	id := fmt.Sprintf("%08X", ECUID)
	text := callText(t, ctx, cs, "can_re_analyse", map[string]any{"port": "can0", "id": id, "analyses": []any{"marks"}, "near_ms": markNearMS})
	type stat struct {
		Index     int     `json:"index"`
		NearMarks int     `json:"near_marks"`
		NearShare float64 `json:"near_share"`
		ElseShare float64 `json:"else_share"`
		Lift      float64 `json:"lift"`
	}
	var env struct {
		OK   bool `json:"ok"`
		Data struct {
			Frames int `json:"frames"`
			Marks  struct {
				Marks     int    `json:"marks"`
				Stretches int    `json:"stretches"`
				Bits      []stat `json:"bits"`
				Bytes     []stat `json:"bytes"`
			} `json:"marks"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(text), &env); err != nil || !env.OK {
		t.Fatalf("can_re_analyse: %v %s", err, text)
	}
	r := env.Data.Marks
	if r.Marks != markPresses || r.Stretches == 0 || len(r.Bits) == 0 || len(r.Bytes) < 2 {
		t.Fatalf("can_re_analyse marks over %d frames: %d marks, %d stretches away from them, want %d marks and a base rate: %s",
			env.Data.Frames, r.Marks, r.Stretches, markPresses, text)
	}
	t.Logf("can_re_analyse can0 %s: %d frames, %d marks, near_ms %d, %d stretches away; first bits %+v; bytes %+v",
		id, env.Data.Frames, r.Marks, markNearMS, r.Stretches, r.Bits[:min(3, len(r.Bits))], r.Bytes)
	if r.Bits[0].Index != ECUBit {
		t.Errorf("bit %d ranks first (%+v), want the toggled bit %d", r.Bits[0].Index, r.Bits[0], ECUBit)
	}
	counter := -1.0
	for _, by := range r.Bytes {
		if by.Index == 0 {
			counter = by.Lift
		}
	}
	if r.Bytes[0].Index != ECUBit/8 || counter >= r.Bytes[0].Lift {
		t.Errorf("byte %d ranks first (%+v), counter byte 0 lift %.3f: want byte %d, the toggled bit's, first and the counter below it", r.Bytes[0].Index, r.Bytes[0], counter, ECUBit/8)
	}
}
