package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/coverage"
)

// tool is one MCP tool as a value: its contract and its run function,
// nothing else. In is the arguments struct (its JSON Schema is the input
// schema, built from the argument types of args.go), Out the answer:
// page[Row] for a list tool, any JSON-tagged struct for an object tool.
//
// Everything a rule depends on lives in the shared types In and Out are
// built from (Paging, Projection, PortSelector, untrusted.Text), and the
// adapter below applies every rule to every tool: strict decoding against
// the schema, the run, the envelope, projection, float rounding, the
// provenance note, the byte budget. A rule holds for all tools or none.
type tool[In, Out any] struct {
	name  string
	desc  string
	hints mcpgo.ToolAnnotation // readOnly(), writesFile(), transmits(…): all four hints set
	// ids are a list tool's identifying columns: they survive projection
	// and are the only required properties of its rows.
	ids []string
	// text names where sender text in its answers comes from, for the
	// provenance note; a tool whose answers carry none leaves it empty.
	text []textSource
	// reads is the captured data its answers read (coverage.go): the
	// adapter adds their coverage block; readsNothing for a tool that
	// reads none. Every tool says which (TestEveryToolSaysWhatItReads).
	reads coverage.Family
	run   func(c *call, in In) (Out, error)
}

// call is what one run sees: the context, the stores, the source as it
// was when the call started, and the warnings it adds.
type call struct {
	ctx  context.Context
	d    Deps
	req  mcpgo.CallToolRequest
	src  SourceInfo
	warn []string
	// cov is the answer's coverage block; nil for a tool that reads no
	// captured data.
	cov *coverageBlock
	// text adds provenance sources known only at run time (the DBC file
	// an answer quotes).
	text []textSource
	// progressAt and progressDone are the last progress notification
	// sent (progress.go).
	progressAt   time.Time
	progressDone float64
}

// warnf adds one warning to the answer.
func (c *call) warnf(format string, args ...any) {
	c.warn = append(c.warn, fmt.Sprintf(format, args...))
}

// toolDef is what the registry needs of a tool, whatever its types.
type toolDef interface {
	// toolName is the name alone: info builds the schemas, which is most
	// of the server's start-up, and the registry checks names first.
	toolName() string
	info() toolInfo
	handler(d Deps, ti toolInfo, maxBytes int) server.ToolHandlerFunc
}

// toolInfo is a tool's contract as tools/list and the tests see it.
type toolInfo struct {
	name, desc string
	hints      mcpgo.ToolAnnotation
	// input is the checked input schema, with its advertised bytes,
	// built on first use (a tool call, tools/list): building every tool's
	// was most of the server's start-up, which a box that only captures,
	// or has no client yet, never needs.
	input func() *argSchema
	// output is the envelope's schema, encoded on first use (tools/list
	// with output schemas, describe_response_shape): encoding every
	// tool's at start-up was most of the server's construction.
	output  func() json.RawMessage
	list    bool
	columns []string // a list tool's row columns
	ids     []string
	text    []textSource
	reads   coverage.Family
}

// mcpTool is the tool as mcp-go registers it: without its input schema,
// which withInputSchemas adds as tools are listed; the output schema is
// advertised only when the operator asked for output schemas.
func (i toolInfo) mcpTool(withOutput bool) mcpgo.Tool {
	t := mcpgo.Tool{Name: i.name, Description: i.desc, Annotations: i.hints}
	if withOutput {
		t.RawOutputSchema = i.output()
	}
	return t
}

// withInputSchemas gives each listed tool its input schema, built on
// first use (toolInfo.input): tools/list shows the tools as if they had
// been registered with it.
func withInputSchemas(byName map[string]toolInfo) server.ToolFilterFunc {
	return func(_ context.Context, tools []mcpgo.Tool) []mcpgo.Tool {
		for i := range tools {
			if ti, ok := byName[tools[i].Name]; ok {
				tools[i].RawInputSchema = ti.input().raw
			}
		}
		return tools
	}
}

// listAnswer marks page[Row], so the adapter knows an answer is a list.
type listAnswer interface{ listPage() }

// page is a list tool's answer: one page of rows.
type page[Row any] struct {
	Items []Row
	Page  Page
}

func (page[Row]) listPage() {}

// pageKeys are the pager's keys of the page's rows (nil for a page not
// built by the pager, which then cannot be cut).
func (p page[Row]) pageKeys() []rowKey {
	if len(p.Page.keys) != len(p.Items) {
		return nil
	}
	return p.Page.keys
}

func (t tool[In, Out]) toolName() string { return t.name }

func (t tool[In, Out]) info() toolInfo {
	i := toolInfo{name: t.name, desc: t.desc, hints: t.hints, ids: t.ids, text: t.text, reads: t.reads}
	var zero Out
	if _, isList := any(zero).(listAnswer); isList {
		i.list = true
		i.output, i.columns = listSchemaOf[Out](t.name, t.ids)
	} else {
		i.output = objectSchemaOf[Out]()
	}
	if t.reads == readsNothing {
		i.output = withoutCoverage(i.output)
	}
	l := &lazySchema{tool: t.name, list: i.list, columns: i.columns, build: inputSchemaOf[In]}
	i.input = l.get
	return i
}

// lazySchema builds a tool's input schema once, on first use. Not
// generic and not sync.OnceValue: either would repeat its code in every
// tool's instantiation (320 KiB of the arm64 binary).
type lazySchema struct {
	once    sync.Once
	tool    string
	list    bool
	columns []string
	build   func(tool string) *argSchema
	s       *argSchema
}

func (l *lazySchema) get() *argSchema {
	l.once.Do(func() {
		in := l.build(l.tool)
		if l.list {
			if !slices.Contains(in.names(), "fields") || !slices.Contains(in.names(), "limit") {
				panic(fmt.Sprintf("list tool %s must embed Paging and Projection", l.tool))
			}
			in.allowFields(l.columns)
		}
		l.s = in
	})
	return l.s
}

// handler adapts the tool to mcp-go. The source is read before anything
// else so that an answer never says "exhausted" about a read that began
// while frames were still arriving.
func (t tool[In, Out]) handler(d Deps, ti toolInfo, maxBytes int) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		c := &call{ctx: ctx, d: d, req: req, src: d.Source()}
		in, err := decodeArgs[In](ti.input(), req.GetRawArguments())
		if err != nil {
			return failure(c, err), nil
		}
		out, err := t.run(c, in)
		var ask *needInput
		if errors.As(err, &ask) {
			return ask.res, nil
		}
		if err != nil {
			return failure(c, err), nil
		}
		if t.reads != readsNothing {
			rep := d.Coverage(coverageQuery(t.reads, in))
			c.cov = blockOf(rep)
			c.warn = append(c.warn, rep.Warnings...)
		}
		body, err := encodeAnswer(c, out, projectionOf(in), ti)
		if err != nil {
			return failure(c, err), nil
		}
		if len(body) > maxBytes {
			cut, fits := cutToBudget(c, out, body, maxBytes, projectionOf(in))
			if !fits {
				return failure(c, tooLarge(ti, len(body), maxBytes, body, req.GetArguments())), nil
			}
			body = cut
		}
		return rendered(body, true, provenanceFor(body, append(slices.Clone(ti.text), c.text...))), nil
	}
}

// encodeAnswer builds the envelope around out, projects a list's rows,
// and rounds floats to the stated precision (jsonnum.go).
func encodeAnswer[Out any](c *call, out Out, fields []string, ti toolInfo) ([]byte, error) {
	var env any
	if p, isList := any(out).(interface{ envelope(*call) any }); isList && ti.list {
		env = p.envelope(c)
	} else {
		env = Envelope[Out]{OK: true, Data: &out, Source: c.src, Coverage: c.cov, Warnings: nonNil(c.warn), Errors: []ErrorInfo{}}
	}
	b, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	if ti.list && len(fields) > 0 {
		if b, err = project(b, append(slices.Clone(fields), ti.ids...)); err != nil {
			return nil, err
		}
	}
	return roundFloats(b), nil
}

func (p page[Row]) envelope(c *call) any {
	pg := p.Page
	if pg.Returned == 0 {
		pg.Returned = len(p.Items)
	}
	return ListEnvelope[Row]{OK: true, Items: nonNil(p.Items), Page: &pg, Source: c.src, Coverage: c.cov, Warnings: nonNil(c.warn), Errors: []ErrorInfo{}}
}

// failure renders an error as the envelope's one error: a *toolError as
// it is, anything else as INTERNAL, logged, because a tool that returns a
// plain Go error has a bug or hit something it did not expect.
func failure(c *call, err error) *mcpgo.CallToolResult {
	var te *toolError
	if !errors.As(err, &te) {
		c.d.Log.Warn("tool failed", "tool", c.req.Params.Name, "err", err)
		te = &toolError{ErrorInfo{Code: CodeInternal, Message: err.Error(), Hint: "retry; if it persists, report it"}}
	}
	return failWith(c.src, te.info, c.warn...)
}

// needInput is how a run asks the client for more input (an
// elicitation): the adapter returns the input request as it is, and
// mcp-go re-invokes the tool with the answer (SEP-2322 for 2026-07-28
// clients, its own bridge for older ones).
type needInput struct{ res *mcpgo.CallToolResult }

func (*needInput) Error() string { return "the tool asks the client for input" }

// askInput ends a run with an input request built by
// server.NewInputRequestBuilder.
func askInput(res *mcpgo.CallToolResult) error { return &needInput{res} }
