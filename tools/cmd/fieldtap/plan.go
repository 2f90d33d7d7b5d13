package main

// fieldtap plan show FILE            print a transmit plan for a person
// fieldtap plan run FILE --port P    run it through the same gatekeeper
//
// A plan file is the "plan" object of a dry-run answer (or the whole
// answer). run builds services/transmit from the box's configuration,
// so every gate applies as it does over MCP, and asks on the terminal.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"fieldtap/firmware/config"
	"fieldtap/services/transmit"
)

const planUsage = `usage: fieldtap plan show FILE
       fieldtap plan run FILE --port P [--config FILE]

  show  print the plan: every frame byte for byte, risk, what it cannot know
  run   send it through the transmit gates (config, arm switch, rate, bus
        load, audit), after you answer y on this terminal
`

// planFile is what a plan file holds (transmit.Plan's JSON, or an
// envelope around it). Its risk is not read: the service classes the
// frames again, as it does every plan.
type planFile struct {
	PlanID        string           `json:"plan_id"`
	Port          string           `json:"port"`
	Medium        transmit.Medium  `json:"medium"`
	Tool          string           `json:"tool"`
	Summary       string           `json:"summary"`
	Frames        []transmit.Frame `json:"frames"`
	Preconditions []string         `json:"preconditions"`
	CannotKnow    []string         `json:"cannot_know"`
	SHA256        string           `json:"sha256"`
}

func plan(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 || (args[0] != "show" && args[0] != "run") {
		fmt.Fprint(stderr, planUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("fieldtap plan "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.String("port", "", "port to send on (run; must match the plan's port)")
	cfgPath := fs.String("config", "", "fieldtapd configuration (run)")
	if err := fs.Parse(args[2:]); err != nil || fs.NArg() > 0 {
		fmt.Fprint(stderr, planUsage)
		return exitUsage
	}
	pf, err := readPlanFile(args[1])
	if err != nil {
		fmt.Fprintln(stderr, "fieldtap plan:", err)
		return exitFail
	}
	if args[0] == "show" {
		return showPlan(pf, stdout, stderr)
	}
	if *port == "" {
		fmt.Fprintln(stderr, "fieldtap plan run: --port is required (it must name the plan's port)")
		return exitUsage
	}
	if *port != pf.Port {
		fmt.Fprintf(stderr, "fieldtap plan run: the plan is for port %s, not %s\n", pf.Port, *port)
		return exitUsage
	}
	return runPlan(pf, *cfgPath, stdin, stdout, stderr)
}

func readPlanFile(path string) (planFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return planFile{}, err
	}
	var env struct {
		Data *struct {
			Plan *json.RawMessage `json:"plan"`
		} `json:"data"`
		Plan *json.RawMessage `json:"plan"`
	}
	raw := json.RawMessage(b)
	if json.Unmarshal(b, &env) == nil {
		switch {
		case env.Data != nil && env.Data.Plan != nil:
			raw = *env.Data.Plan
		case env.Plan != nil:
			raw = *env.Plan
		}
	}
	var pf planFile
	if err := json.Unmarshal(raw, &pf); err != nil {
		return pf, fmt.Errorf("%s: %w", path, err)
	}
	if pf.Port == "" || len(pf.Frames) == 0 {
		return pf, fmt.Errorf("%s: not a plan (no port or no frames)", path)
	}
	if pf.Medium == "" {
		pf.Medium = transmit.MediumCAN
	}
	return pf, nil
}

func (pf planFile) spec() transmit.Spec {
	return transmit.Spec{Port: pf.Port, Medium: pf.Medium, Tool: pf.Tool, Summary: pf.Summary, Frames: pf.Frames,
		Preconditions: pf.Preconditions, Unknowns: pf.CannotKnow}
}

// showPlan checks the plan as the service would and prints it; a file
// whose frames no longer match its sha256 is said to be edited.
func showPlan(pf planFile, stdout, stderr io.Writer) int {
	svc, err := transmit.New(transmit.Options{Ports: []transmit.Port{{Name: pf.Port, Medium: pf.Medium}}})
	if err != nil {
		fmt.Fprintln(stderr, "fieldtap plan show:", err)
		return exitFail
	}
	p, err := svc.Plan(context.Background(), transmit.Caller{Via: transmit.ViaCLI, Transport: "terminal"}, pf.spec())
	if err != nil {
		fmt.Fprintln(stderr, "fieldtap plan show:", err)
		return exitFail
	}
	fmt.Fprint(stdout, strings.Replace(p.Text(), p.ID, pf.PlanID, 1))
	if pf.SHA256 != "" && pf.SHA256 != p.Hash {
		fmt.Fprintln(stdout, "WARNING: the frames do not match the file's sha256: the plan was edited after the box made it")
	}
	return exitOK
}

// runPlan sends the plan through the gatekeeper built from the config.
func runPlan(pf planFile, cfgPath string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg := config.Default()
	if cfgPath != "" {
		var err error
		if cfg, err = config.Load(cfgPath); err != nil {
			fmt.Fprintln(stderr, "fieldtap plan run:", err)
			return exitUsage
		}
	}
	o, closeAudit, err := cliOptions(cfg, pf)
	if err != nil {
		fmt.Fprintln(stderr, "fieldtap plan run:", err)
		return exitFail
	}
	defer closeAudit()
	return runWith(o, pf, stdin, stdout, stderr)
}

// runWith is runPlan after the options are built (tests give fakes).
func runWith(o transmit.Options, pf planFile, stdin io.Reader, stdout, stderr io.Writer) int {
	svc, err := transmit.New(o)
	if err != nil {
		fmt.Fprintln(stderr, "fieldtap plan run:", err)
		return exitFail
	}
	ctx := context.Background()
	who := transmit.Caller{Via: transmit.ViaCLI, Transport: "terminal"}
	p, err := svc.Plan(ctx, who, pf.spec())
	if err != nil {
		fmt.Fprintln(stderr, "fieldtap plan run:", err)
		return exitFail
	}
	if pf.SHA256 != "" && pf.SHA256 != p.Hash {
		fmt.Fprintln(stderr, "fieldtap plan run: the frames do not match the file's sha256; refusing an edited plan")
		return exitFail
	}
	// What would refuse the plan, gate by gate, before running it: the
	// refusal stops at the first, the next steps name them all.
	blockers := svc.Next(who, true, p).Blockers
	out, err := svc.Execute(ctx, who, p.ID, true, transmit.Confirmation{CanAsk: true})
	if err == nil && out.Status == transmit.StatusNeedsConfirmation {
		fmt.Fprint(stdout, out.Question, "send? [y/N] ")
		reply := transmit.ReplyDecline
		line, rerr := bufio.NewReader(stdin).ReadString('\n')
		switch {
		case rerr != nil && line == "":
			reply = transmit.ReplyCancel
		case strings.TrimSpace(strings.ToLower(line)) == "y":
			reply = transmit.ReplyAccept
		}
		out, err = svc.Execute(ctx, who, p.ID, true, transmit.Confirmation{CanAsk: true, Reply: reply, Token: out.Token})
	}
	var ref *transmit.Refusal
	if errors.As(err, &ref) {
		fmt.Fprintf(stderr, "fieldtap plan run: refused by gate %s: %s (%s)\n", ref.Gate, ref.Message, ref.Hint)
		fmt.Fprint(stderr, nextSteps(ref, blockers))
		if ref.Gate == transmit.GatePortConfig && len(o.Ports) == 1 && o.Ports[0].Transmit && o.Ports[0].Writer == nil {
			fmt.Fprint(stderr, noWriterHelp(pf, o.PlanTTL))
		}
		return exitFail
	}
	if err != nil {
		fmt.Fprintln(stderr, "fieldtap plan run:", err)
		return exitFail
	}
	fmt.Fprintf(stdout, "sent %d frame(s) of plan %s\n", out.Sent, p.ID)
	for _, w := range out.Warnings {
		fmt.Fprintln(stdout, "warning:", w)
	}
	return exitOK
}

// nextSteps is what to do next for every gate that refuses the plan
// (docs/transmit-safety.md): the refusing one first, then the others
// found before the run, each with its hint.
func nextSteps(ref *transmit.Refusal, blockers []transmit.Blocker) string {
	var b strings.Builder
	b.WriteString("next steps:\n")
	fmt.Fprintf(&b, "  %s: %s\n", ref.Gate, ref.Hint)
	for _, bl := range blockers {
		if bl.Gate == ref.Gate {
			continue
		}
		fmt.Fprintf(&b, "  %s: %s (%s)\n", bl.Gate, bl.Hint, bl.Message)
	}
	return b.String()
}

// noWriterHelp says exactly what to do when the CLI cannot send: the bus
// belongs to fieldtapd, so the plan runs there, through the same gates.
func noWriterHelp(pf planFile, ttl time.Duration) string {
	if ttl <= 0 {
		ttl = transmit.DefaultPlanTTL
	}
	id := pf.PlanID
	if id == "" {
		id = "<plan_id of the dry run>"
	}
	return fmt.Sprintf(`This command does not open port %[1]s itself: fieldtapd owns the port and its writer.
Send the plan through the box instead, from an MCP client connected to fieldtapd
(started with --mcp-bundles ...,transmit; over HTTP with a token carrying the
transmit scope, over stdio no token is needed):
  transmit_execute {"plan_id": %[2]q, "ack_active": true}
while the plan is live (plans expire %[3]v after the dry run; otherwise repeat
the %[4]s dry run with "dry_run": false, "ack_active": true). Actuate and erase
plans need a client that supports elicitation, where a person confirms.
`, pf.Port, id, ttl, cmpTool(pf.Tool))
}

func cmpTool(t string) string {
	if t == "" {
		return "same"
	}
	return t
}
