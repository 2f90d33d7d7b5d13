package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/transmit"
)

// The confirmation round trip: the handler returns an elicitation through
// mcp-go's input-request builder (DESIGN.md §3: it serves 2026-07-28
// clients natively and older ones through mcp-go's bridge, which
// re-invokes the handler with the answer). The request state names the
// plan and the service's one-time token; the service, not this layer,
// decides whether an answer is valid.
const (
	elicitKey      = "confirm_transmit"
	stateVersion   = "ftx1"
	codeRefused    = "TRANSMIT_REFUSED"
	codeNoService  = "TRANSMIT_UNAVAILABLE"
	codeBadPlan    = "PLAN_INVALID"
	elicitSendProp = "send"
)

// txGate is the shared part of every transmitting tool's arguments.
type txGate struct {
	DryRun    *bool `json:"dry_run,omitempty" jsonschema:"default true: make and return the plan, send nothing"`
	AckActive bool  `json:"ack_active,omitempty" jsonschema:"must be true to leave dry run; read the plan first"`
}

func (g txGate) dry() bool { return g.DryRun == nil || *g.DryRun }

// frameRow is a plan frame as a client reads it.
type frameRow struct {
	ID            string `json:"id" jsonschema:"hex CAN id (8 digits 29-bit, 3 digits 11-bit); empty for J1708"`
	Extended      bool   `json:"extended"`
	DLC           int    `json:"dlc"`
	Data          string `json:"data" jsonschema:"hex bytes exactly as sent"`
	DelayMicros   int64  `json:"delay_us" jsonschema:"wait after the previous frame"`
	OnFlowControl bool   `json:"on_flow_control,omitempty" jsonschema:"sent only after the ECU's ISO-TP flow control"`
}

// planRow is a plan as a client reads it.
type planRow struct {
	PlanID        string     `json:"plan_id"`
	Port          string     `json:"port"`
	Medium        string     `json:"medium"`
	Tool          string     `json:"tool"`
	Summary       string     `json:"summary"`
	Risk          string     `json:"risk" jsonschema:"read, actuate or erase"`
	Frames        []frameRow `json:"frames"`
	Count         int        `json:"count"`
	DurationMicro int64      `json:"duration_us"`
	AddedLoad     *float64   `json:"estimated_added_bus_load" jsonschema:"fraction of the bus over max(duration, 1 s); null when the bitrate is unknown"`
	LoadBasis     string     `json:"estimated_added_bus_load_basis"`
	Preconditions []string   `json:"preconditions"`
	CannotKnow    []string   `json:"cannot_know"`
	ListensFor    string     `json:"listens_for,omitempty"`
	SHA256        string     `json:"sha256" jsonschema:"fingerprint of port and frames"`
	Created       time.Time  `json:"created"`
	Expires       time.Time  `json:"expires"`
	Executed      bool       `json:"executed"`
	Text          string     `json:"text" jsonschema:"the plan for a person, byte for byte"`
}

// txOut is the answer of every transmitting tool: the plan, and after a
// send what went out and what came back.
type txOut struct {
	Status  string      `json:"status" jsonschema:"planned (dry run, nothing sent) or sent"`
	Plan    planRow     `json:"plan"`
	Next    string      `json:"next,omitempty" jsonschema:"how to send exactly this plan"`
	Sent    int         `json:"frames_sent"`
	Answers []answerRow `json:"answers"`
}

// answerRow is one ECU reply. Text is ECU-supplied and fenced; uds is the
// decoded UDS answer (services/isotp.Response) with its text moved to Text.
type answerRow struct {
	Time time.Time      `json:"ts"`
	From string         `json:"from" jsonschema:"J1939 source address or UDS response id, hex"`
	PGN  uint32         `json:"pgn,omitempty"`
	Via  string         `json:"via,omitempty"`
	Data string         `json:"data_hex"`
	Text string         `json:"text,omitempty" untrusted:"field"`
	NACK bool           `json:"nack,omitempty"`
	UDS  map[string]any `json:"uds,omitempty"`
}

func toAnswerRows(as []transmit.Answer) []answerRow {
	rows := make([]answerRow, 0, len(as))
	for _, a := range as {
		r := answerRow{Time: a.Time, From: a.From, PGN: a.PGN, Via: a.Via, Data: a.Data, Text: a.Text, NACK: a.NACK}
		if a.UDS != nil {
			b, _ := json.Marshal(a.UDS)
			json.Unmarshal(b, &r.UDS)
			delete(r.UDS, "data_text")
		}
		rows = append(rows, r)
	}
	return rows
}

func toPlanRow(p *transmit.Plan) planRow {
	r := planRow{PlanID: p.ID, Port: p.Port, Medium: string(p.Medium), Tool: p.Tool, Summary: p.Summary, Risk: string(p.Risk),
		Count: p.Count, DurationMicro: p.DurationMicro, AddedLoad: p.AddedLoad, LoadBasis: p.LoadBasis,
		Preconditions: p.Preconditions, CannotKnow: p.Unknowns, SHA256: p.Hash, Created: p.Created, Expires: p.Expires,
		Executed: p.Executed, Text: p.Text(), Frames: []frameRow{}}
	b, _ := json.Marshal(p.Frames) // transmit.Frame renders itself as frameRow's fields
	json.Unmarshal(b, &r.Frames)
	if p.Listen != nil {
		lb, _ := json.Marshal(p.Listen)
		r.ListensFor = string(lb)
	}
	return r
}

// caller is who calls, as the auth layer proved it (auth.go). The
// service applies its own rule: over HTTP only a token carrying the
// transmit scope may send, even where the auth layer admits a tokenless
// loopback caller to everything.
func caller(ctx context.Context) transmit.Caller {
	c := callerOf(ctx)
	return transmit.Caller{Via: transmit.ViaMCP, Transport: c.Transport, TokenID: c.TokenID, Scopes: c.Scopes}
}

// canElicit reports whether this request's client declared elicitation:
// per request from 2026-07-28, per session before.
func canElicit(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && info.ClientCapabilities.Elicitation != nil
	}
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return s.GetClientCapabilities().Elicitation != nil
	}
	return false
}

// txHandler decodes arguments strictly (as handler does) and passes the
// raw request on, because the confirmation round trip needs its
// inputResponses and requestState.
func txHandler[In any](d Deps, fn func(context.Context, mcpgo.CallToolRequest, In) *mcpgo.CallToolResult) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		if d.Transmit == nil {
			return fail(d.Source(), codeNoService, "this box has no transmitter", "fieldtapd builds one when it starts with the transmit bundle"), nil
		}
		var in In
		raw, err := json.Marshal(req.GetRawArguments())
		if err != nil {
			return fail(d.Source(), CodeInvalidArgument, "arguments are not JSON: "+err.Error(), "send an object"), nil
		}
		if len(raw) > 0 && string(raw) != "null" {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&in); err != nil {
				return fail(d.Source(), CodeInvalidArgument, "arguments: "+err.Error(), "see the tool's inputSchema in tools/list"), nil
			}
		}
		return fn(ctx, req, in), nil
	}
}

// planAndMaybeRun is every transmitting tool after its arguments became a
// spec: on a confirmation retry it resumes the stored plan (never a new
// one); otherwise it stores the plan, and unless dry_run is false, runs it.
func planAndMaybeRun(ctx context.Context, d Deps, req mcpgo.CallToolRequest, g txGate, spec func() (transmit.Spec, error)) *mcpgo.CallToolResult {
	if planID, tok, ok := parseState(req.Params.RequestState); ok {
		return execute(ctx, d, req, planID, g.AckActive, tok)
	}
	sp, err := spec()
	if err != nil {
		return fail(d.Source(), codeBadPlan, err.Error(), "correct the arguments; nothing was sent")
	}
	p, err := d.Transmit.Plan(ctx, caller(ctx), sp)
	if err != nil {
		return fail(d.Source(), codeBadPlan, err.Error(), "correct the arguments; nothing was sent")
	}
	if g.dry() {
		return ok(d.Source(), txOut{Status: "planned", Plan: toPlanRow(p), Answers: []answerRow{},
			Next: fmt.Sprintf("nothing was sent. To send exactly this plan: transmit_execute {\"plan_id\": %q, \"ack_active\": true} before %s", p.ID, p.Expires.Format(time.RFC3339))})
	}
	return execute(ctx, d, req, p.ID, g.AckActive, "")
}

// execute runs a stored plan through the service's gates, asking a person
// through elicitation when the service wants a confirmation.
func execute(ctx context.Context, d Deps, req mcpgo.CallToolRequest, planID string, ack bool, token string) *mcpgo.CallToolResult {
	conf := transmit.Confirmation{CanAsk: canElicit(ctx), Token: token}
	if token != "" {
		conf.Reply = replyOf(server.ElicitationResponse(req.Params.InputResponses, elicitKey))
	}
	out, err := d.Transmit.Execute(ctx, caller(ctx), planID, ack, conf)
	var ref *transmit.Refusal
	switch {
	case errors.As(err, &ref):
		msg := fmt.Sprintf("refused by gate %s: %s", ref.Gate, ref.Message)
		if ref.Sent > 0 {
			msg += fmt.Sprintf(" (%d frames were sent before it)", ref.Sent)
		}
		return fail(d.Source(), codeRefused, msg, ref.Hint)
	case err != nil:
		return fail(d.Source(), CodeInternal, err.Error(), "nothing more was sent")
	case out.Status == transmit.StatusNeedsConfirmation:
		return server.NewInputRequestBuilder(stateVersion+":"+out.PlanID+":"+out.Token).
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
			}).ToolResult()
	}
	p := d.Transmit.Get(caller(ctx).Owner(), out.PlanID)
	res := txOut{Status: out.Status, Sent: out.Sent, Answers: toAnswerRows(out.Answers)}
	if p != nil {
		res.Plan = toPlanRow(p)
	}
	return ok(d.Source(), res, out.Warnings...)
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

func parseState(s string) (planID, token string, ok bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 || parts[0] != stateVersion {
		return "", "", false
	}
	return parts[1], parts[2], true
}
