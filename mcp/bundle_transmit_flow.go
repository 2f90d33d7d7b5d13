package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp/auth"
	"fieldtap/mcp/callslot"
	"fieldtap/services/transmit"
)

// The confirmation round trip: a run that needs a person's answer ends
// with an input request (askInput over mcp-go's input-request builder:
// 2026-07-28 clients get it natively, older ones through mcp-go's bridge,
// which re-invokes the tool with the answer). The request state is the
// service's own, HMAC-bound to the plan, this tool, these arguments and
// this token and session, answerable once (services/transmit/state.go);
// the service, not this layer, decides whether an answer is valid.
const (
	elicitKey      = "confirm_transmit"
	elicitSendProp = "send"
)

// caller is who calls, as the auth layer proved it (mcp/auth), with the
// MCP session over HTTP: a plan and a confirmation belong to the token
// and the session that made them. The service applies its own rule: over
// HTTP only a token carrying the transmit scope may send.
func caller(ctx context.Context) transmit.Caller {
	c := auth.CallerOf(ctx)
	tc := transmit.Caller{Via: transmit.ViaMCP, Transport: c.Transport, TokenID: c.TokenID, Scopes: c.Scopes}
	if s := server.ClientSessionFromContext(ctx); s != nil && c.Transport == "http" {
		tc.Session = s.SessionID()
	}
	return tc
}

// binding is what a confirmation is bound to besides the plan: this
// tool and a digest of its arguments, the same on the call that asks and
// on the retry that carries the answer.
func binding(c *call) (tool, digest string, err error) {
	digest, err = transmit.ArgsDigest(c.req.GetRawArguments())
	return c.req.Params.Name, digest, err
}

// canElicit reports whether this request's client declared elicitation:
// per request from 2026-07-28, per session before.
func canElicit(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && info.ClientCapabilities.Elicitation != nil
	}
	if s, isInfo := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); isInfo {
		return s.GetClientCapabilities().Elicitation != nil
	}
	return false
}

// planInvalid is PLAN_INVALID for a planner's refusal; an argument error
// stays what it is.
func planInvalid(err error) error {
	var te *toolError
	if errors.As(err, &te) {
		return err
	}
	if errors.Is(err, transmit.ErrNoPort) {
		return argErr("port", "transmit_status lists the ports this box can plan for", "%s", strings.TrimPrefix(err.Error(), "transmit: "))
	}
	return failErr(CodePlanInvalid, err.Error(), "correct the arguments; nothing was sent")
}

// planAndMaybeRun is every transmitting tool once its arguments make a
// spec: on a confirmation retry it resumes the stored plan (never a new
// one); otherwise it stores the plan and, unless it is a dry run, runs it.
func planAndMaybeRun(c *call, g txGate, spec func() (transmit.Spec, error)) (txOut, error) {
	svc := c.d.Transmit
	if state := c.req.Params.RequestState; state != "" {
		// A retry carrying an answer: the state names the plan.
		return execute(c, "", g.AckActive, g.Override, state)
	}
	sp, err := spec()
	if err != nil {
		return txOut{}, planInvalid(err)
	}
	p, err := svc.Plan(c.ctx, caller(c.ctx), sp)
	if err != nil {
		return txOut{}, planInvalid(err)
	}
	if g.dry() {
		c.note(transmit.PlannedNote(p))
		return planned(c, svc, p), nil
	}
	return execute(c, p.ID, g.AckActive, g.Override, "")
}

// planned is a dry run's answer: the plan, and the call that sends it
// only when no gate known now would refuse it (the service decides, from
// the same checks an execution runs).
func planned(c *call, svc *transmit.Service, p *transmit.Plan) txOut {
	row := planRowOf(p)
	out := txOut{Status: "planned", Plan: &row, Answers: []answerRow{}}
	n := svc.Next(caller(c.ctx), canElicit(c.ctx), p)
	if n.CanSend {
		out.Next = &nextCall{Tool: transmitExecute.name, Arguments: nextArgs{PlanID: p.ID, AckActive: true}, Before: p.Expires}
	}
	out.NextReason = n.Text
	out.Blockers = mapRows(n.Blockers, blockerRowOf)
	return out
}

// execute runs a stored plan through the service's gates, asking a person
// through elicitation when the service wants a confirmation. state is the
// request state a retry carries back, empty on a first call.
func execute(c *call, planID string, ack bool, override, state string) (txOut, error) {
	svc := c.d.Transmit
	tool, digest, err := binding(c)
	if err != nil {
		return txOut{}, err
	}
	conf := transmit.Confirmation{CanAsk: canElicit(c.ctx), Token: state, Tool: tool, ArgsDigest: digest, Override: override}
	if state != "" {
		conf.Reply = replyOf(server.ElicitationResponse(c.req.Params.InputResponses, elicitKey))
	}
	out, err := svc.Execute(c.ctx, caller(c.ctx), planID, ack, conf)
	c.note(transmit.NoteOf(out, err))
	var ref *transmit.Refusal
	var terr *transmit.Error
	switch {
	case errors.As(err, &ref):
		msg := fmt.Sprintf("refused by gate %s: %s", ref.Gate, ref.Message)
		if ref.Sent > 0 {
			msg += fmt.Sprintf(" (%d frames were sent before it)", ref.Sent)
		}
		return txOut{}, &toolError{ErrorInfo{Code: CodeTransmitRefused, Message: msg, Hint: ref.Hint, Gate: ref.Gate, Reason: ref.Code}}
	case errors.As(err, &terr):
		return txOut{}, &toolError{ErrorInfo{Code: CodeTransmitRefused, Message: terr.Error(), Hint: "nothing was sent", Reason: terr.Code}}
	case err != nil:
		return txOut{}, fmt.Errorf("transmit plan %s: %w", planID, err)
	case out.Status == transmit.StatusNeedsConfirmation:
		// The client answers, or not, without this call holding one of
		// the box's concurrency slots (mcp/callslot).
		callslot.Release(c.ctx)
		return txOut{}, askInput(server.NewInputRequestBuilder(out.Token).
			Elicit(elicitKey, mcpgo.ElicitationParams{
				Mode:    mcpgo.ElicitationModeForm,
				Message: out.Question,
				RequestedSchema: map[string]any{
					"type": "object",
					"properties": map[string]any{
						elicitSendProp: map[string]any{"type": "boolean", "title": "Send these frames", "description": "true sends the plan exactly as shown; anything else sends nothing"},
					},
					"required": []string{elicitSendProp},
				},
			}).ToolResult())
	}
	for _, w := range out.Warnings {
		c.warnf("%s", w)
	}
	res := txOut{Status: out.Status, Sent: out.Sent, Answers: answerRows(out.Answers), Blockers: []blockerRow{},
		NextReason: "sent: a plan runs once; make a new dry run to send again"}
	if u := out.Uncertain; u != nil {
		res.Uncertain = uncertainRowOf(u)
		res.NextReason = fmt.Sprintf("uncertain: frame %d may have gone out; check its effect on the bus before a new dry run (a plan runs once)", u.Frame)
	}
	if p := svc.Get(caller(c.ctx).Owner(), out.PlanID); p != nil {
		row := planRowOf(p)
		res.Plan = &row
		res.Scan = mapRows(transmit.ScanTally(p, out), scanRowOf)
	}
	return res, nil
}

// replyOf maps an elicitation result: only an accept whose form says
// send=true is an accept; no answer at all is ReplyNone.
func replyOf(r *mcpgo.ElicitationResult) transmit.Reply {
	if r == nil {
		return transmit.ReplyNone
	}
	switch r.Action {
	case mcpgo.ElicitationResponseActionAccept:
		if m, isMap := r.Content.(map[string]any); isMap && m[elicitSendProp] == true {
			return transmit.ReplyAccept
		}
		return transmit.ReplyDecline
	case mcpgo.ElicitationResponseActionDecline:
		return transmit.ReplyDecline
	case mcpgo.ElicitationResponseActionCancel:
		return transmit.ReplyCancel
	}
	return transmit.ReplyNone
}
