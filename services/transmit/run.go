package transmit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"fieldtap/services/isotp"
)

// ISO-TP sender timing (ISO 15765-2 §9.8.2): N_Bs, the wait for the
// receiver's flow control.
const flowControlWait = time.Second

// run puts the plan on the wire and collects answers. It returns a
// Refusal only when it stopped early; out.Sent says how far it got. A
// frame the writer could not confirm, which may have gone out, also
// stops it: out.Uncertain says which, and what the adapter answered
// later, if anything.
func (s *Service) run(ctx context.Context, c Caller, ps *portState, p *Plan, out *Outcome) *Refusal {
	if ps.Mode != nil {
		if err := s.setMode(ctx, ps, ModeActive); err != nil {
			return refuse(GatePortConfig, "check the adapter; the port stays listen-only", "port %s could not leave listen-only: %v", p.Port, err)
		}
		defer func() {
			if err := s.setMode(context.WithoutCancel(ctx), ps, ModeListenOnly); err != nil {
				s.audit(ctx, Record{Event: EventModeError, Message: err.Error()}, c, p)
				out.Warnings = append(out.Warnings, "the port did not return to listen-only: "+err.Error())
			}
		}()
	}
	var rx <-chan RxFrame
	if ps.Listener != nil && (p.expect != nil || p.listens != nil || hasFlowControl(p)) {
		ch, stop := ps.Listener.Listen(ctx)
		defer stop()
		rx = ch
	}
	if p.listens != nil && rx == nil {
		return refuse(GatePortConfig, "plan single requests with uds_request instead", "port %s delivers no frames to the transmitter, so a scan cannot wait for each answer", p.Port)
	}
	l := newListening(p.expect)
	var st steps
	var credit int // consecutive frames allowed by the last flow control; -1 = unlimited
	var stMin time.Duration
	for i, f := range p.Frames {
		delay := f.Delay
		if f.OnFlowControl {
			if credit == 0 {
				fc, err := s.awaitFlowControl(ctx, rx, p, l, out)
				if err != nil {
					return stopped(out, GateWriter, err.Error())
				}
				credit, stMin = fc.BlockSize, time.Duration(isotp.STminMicros(fc.STmin))*time.Microsecond
				if credit == 0 {
					credit = -1
				}
			}
			delay = max(delay, stMin)
			if credit > 0 {
				credit--
			}
		}
		if err := sleep(ctx, delay); err != nil {
			return stopped(out, GateWriter, "cancelled: "+err.Error())
		}
		if !s.o.Arm.Armed() {
			return stopped(out, GateDisarmed, fmt.Sprintf("the arm input went off before frame %d", i+1))
		}
		handed := time.Now()
		if err := ps.Writer.WriteFrame(ctx, wireID(p.Medium, f.ID), f.Data); err != nil {
			if u := uncertainOf(ctx, err, i+1, handed); u != nil {
				out.Status, out.Uncertain = StatusUncertain, u
				return nil
			}
			return stopped(out, GateWriter, fmt.Sprintf("frame %d: %v", i+1, err))
		}
		out.Sent++
		if p.listens != nil && p.listens[i] != nil {
			if err := st.await(ctx, s, rx, ps, p.listens[i], i+1, out); err != nil {
				return stopped(out, GateWriter, fmt.Sprintf("after frame %d: %v", i+1, err))
			}
		}
	}
	if rx != nil && p.expect != nil {
		if err := s.collect(ctx, rx, ps, p.expect, l, out); err != nil {
			out.Warnings = append(out.Warnings, err.Error())
		}
	}
	out.Answers = append(out.Answers, l.answers...)
	st.report(out)
	return nil
}

// steps tallies a scan's requests as each is answered or given up.
type steps struct {
	silent  []int // frame numbers without an answer
	dropped int   // answers past maxScanAnswers
}

// await listens for one request's answer before the next is sent. A
// silent ECU is tallied, not an error; only a dead receive path, a
// disarm or a cancel stops the scan.
func (st *steps) await(ctx context.Context, s *Service, rx <-chan RxFrame, ps *portState, e *Expect, step int, out *Outcome) error {
	l := newListening(e)
	err := s.collect(ctx, rx, ps, e, l, out)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(l.answers) == 0 {
		if err != nil && !errors.Is(err, errNoAnswer) {
			return err
		}
		st.silent = append(st.silent, step)
		return nil
	}
	for _, a := range l.answers {
		if len(out.Answers) == maxScanAnswers {
			st.dropped++
			continue
		}
		a.Step = step
		out.Answers = append(out.Answers, a)
	}
	return nil
}

func (st *steps) report(out *Outcome) {
	if n := len(st.silent); n > 0 {
		out.Silent = st.silent
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d request(s) had no answer within %v (frames %s): the ECU is absent, asleep or ignores the DID", n, scanAnswerWait, listInts(st.silent, 8)))
	}
	if st.dropped > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d answer(s) past the %d a scan keeps were dropped", st.dropped, maxScanAnswers))
	}
}

// listInts writes at most n numbers, then how many more.
func listInts(v []int, n int) string {
	parts := make([]string, 0, n+1)
	for i, x := range v {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(v)-n))
			break
		}
		parts = append(parts, strconv.Itoa(x))
	}
	return strings.Join(parts, ", ")
}

// stopped is the refusal of a run a gate stopped after out.Sent frames;
// send records it, once.
func stopped(out *Outcome, gate, msg string) *Refusal {
	hint := "nothing was sent; see the audit log"
	if out.Sent > 0 {
		hint = fmt.Sprintf("the first %d frame(s) were sent, none after; see the audit log", out.Sent)
	}
	ref := refuse(gate, hint, "%s", msg)
	ref.Sent = out.Sent
	return ref
}

func wireID(m Medium, id uint32) uint32 {
	if m == MediumJ1708 {
		return 0
	}
	return id
}

func hasFlowControl(p *Plan) bool {
	for _, f := range p.Frames {
		if f.OnFlowControl {
			return true
		}
	}
	return false
}

func (s *Service) setMode(ctx context.Context, ps *portState, m Mode) error {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.mode == m {
		return nil
	}
	if err := ps.Mode.SetMode(ctx, m); err != nil {
		return err
	}
	ps.mode = m
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitFlowControl waits for the ECU's clear-to-send on the plan's
// response id; frames that are not flow control still reach the listener.
func (s *Service) awaitFlowControl(ctx context.Context, rx <-chan RxFrame, p *Plan, l *listening, out *Outcome) (isotp.Frame, error) {
	if rx == nil || p.expect == nil {
		return isotp.Frame{}, fmt.Errorf("a multi-frame request needs the port's receive path for flow control, which this port lacks")
	}
	deadline := time.NewTimer(flowControlWait)
	defer deadline.Stop()
	for {
		select {
		case f, ok := <-rx:
			if !ok {
				return isotp.Frame{}, fmt.Errorf("the port's receive path closed while waiting for flow control")
			}
			if f.ID != p.expect.ResponseID {
				continue
			}
			fr, err := isotp.Parse(f.Data)
			if err != nil || fr.Type != isotp.TypeFlowControl {
				continue
			}
			switch fr.Status {
			case isotp.FlowContinue:
				return fr, nil
			case isotp.FlowOverflow:
				return fr, fmt.Errorf("the ECU refused the request as too long (flow control overflow)")
			}
			deadline.Reset(flowControlWait) // FlowWait: the ECU asks for more time
		case <-deadline.C:
			return isotp.Frame{}, fmt.Errorf("no flow control from %s within %v", Frame{ID: p.expect.ResponseID}.IDHex(), flowControlWait)
		case <-ctx.Done():
			return isotp.Frame{}, ctx.Err()
		}
	}
}

// collect listens until the plan's timeout (or a complete UDS answer),
// answering a First Frame with the plan's flow-control frame.
func (s *Service) collect(ctx context.Context, rx <-chan RxFrame, ps *portState, e *Expect, l *listening, out *Outcome) error {
	deadline := time.NewTimer(e.Timeout)
	defer deadline.Stop()
	for {
		select {
		case f, ok := <-rx:
			if !ok {
				return fmt.Errorf("the port's receive path closed while listening for the answer")
			}
			act := l.feed(f)
			if act.extend > 0 {
				deadline.Reset(act.extend)
			}
			if act.flowControl {
				if !s.o.Arm.Armed() {
					return fmt.Errorf("the arm input went off: the ECU's multi-frame answer was not acknowledged with flow control")
				}
				if err := ps.Writer.WriteFrame(ctx, e.RequestID, e.FlowControl); err != nil {
					var m mayHaveSent
					if errors.As(err, &m) && m.MayHaveSent() {
						return fmt.Errorf("the flow-control frame may have gone out (%w): the rest of the ECU's answer may be missing", err)
					}
					return fmt.Errorf("flow control: %w", err)
				}
				out.Sent++
			}
			if act.done {
				return nil
			}
		case <-deadline.C:
			if len(l.answers) == 0 {
				return fmt.Errorf("%w within %v: %s", errNoAnswer, e.Timeout, l.silence())
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
