//go:build mcpconformance

package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// This file exists only in a build with the mcpconformance tag: the
// fixtures the @modelcontextprotocol/conformance server scenarios call,
// with the names, arguments and answers their sources (version 0.1.16)
// ask for. .ci/mcp-conformance.sh builds fieldtapd with the tag for the
// suite alone; a box's build never carries them.

// fixtureStep is the pause the logging and progress scenarios ask for
// between notifications ("~50ms"), so a client sees them arrive apart.
// The handlers also pause after their last notification: over HTTP,
// mcp-go 1.2.1 without an event store can drop a notification its
// forwarder took off the session's channel just as the handler
// returned (streamable_http.go: the forwarder finds done closed and
// returns), and the suite then counts two of three.
const fixtureStep = 50 * time.Millisecond

// Fixed URIs of the suite's resources.
const (
	fixtureWatched  = "test://watched-resource"
	fixtureTemplate = "test://template/{id}/data"
)

func conformanceFixtures() fixtures {
	pngData := base64.StdEncoding.EncodeToString(redPixelPNG())
	text := func(s string) []mcpgo.Content { return []mcpgo.Content{mcpgo.NewTextContent(s)} }
	fixed := func(content ...mcpgo.Content) server.ToolHandlerFunc {
		return func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return &mcpgo.CallToolResult{Content: content}, nil
		}
	}
	return fixtures{
		tools: []server.ServerTool{
			{Tool: fixtureTool("test_simple_text", "Returns a fixed text."),
				Handler: fixed(text("This is a simple text response for testing.")...)},
			{Tool: fixtureTool("test_image_content", "Returns a 1x1 red PNG."),
				Handler: fixed(mcpgo.NewImageContent(pngData, "image/png"))},
			{Tool: fixtureTool("test_audio_content", "Returns a short silent WAV."),
				Handler: fixed(mcpgo.NewAudioContent(base64.StdEncoding.EncodeToString(silentWAV()), "audio/wav"))},
			{Tool: fixtureTool("test_embedded_resource", "Returns an embedded text resource."),
				Handler: fixed(mcpgo.NewEmbeddedResource(mcpgo.TextResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}))},
			{Tool: fixtureTool("test_multiple_content_types", "Returns text, an image and a resource."),
				Handler: fixed(mcpgo.NewTextContent("Multiple content types test:"), mcpgo.NewImageContent(pngData, "image/png"),
					mcpgo.NewEmbeddedResource(mcpgo.TextResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}))},
			{Tool: fixtureTool("test_error_handling", "Always fails with isError."),
				Handler: func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
					return mcpgo.NewToolResultError("This tool intentionally returns an error for testing"), nil
				}},
			{Tool: fixtureTool("test_tool_with_logging", "Sends three info log messages, 50 ms apart."), Handler: fixtureLogging},
			{Tool: fixtureTool("test_tool_with_progress", "Reports progress 0, 50, 100 of 100, 50 ms apart."), Handler: fixtureProgress},
			{Tool: fixtureTool("test_sampling", "Asks the client's LLM to answer prompt.",
				mcpgo.WithString("prompt", mcpgo.Required(), mcpgo.Description("the prompt to send to the LLM"))), Handler: fixtureSampling},
			{Tool: fixtureTool("test_elicitation", "Asks the user for a username and an email.",
				mcpgo.WithString("message", mcpgo.Required(), mcpgo.Description("the message to show the user"))), Handler: fixtureElicit(elicitUser)},
			{Tool: fixtureTool("test_elicitation_sep1034_defaults", "Elicits one field of each primitive type, each with a default."),
				Handler: fixtureElicit(elicitDefaults)},
			{Tool: fixtureTool("test_elicitation_sep1330_enums", "Elicits the five enum shapes of SEP-1330."),
				Handler: fixtureElicit(elicitEnums)},
		},
		prompts: []server.ServerPrompt{
			{Prompt: mcpgo.NewPrompt("test_simple_prompt", mcpgo.WithPromptDescription("A fixed prompt.")),
				Handler: fixturePrompt(func(map[string]string) []mcpgo.PromptMessage {
					return []mcpgo.PromptMessage{mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent("This is a simple prompt for testing."))}
				})},
			{Prompt: mcpgo.NewPrompt("test_prompt_with_arguments", mcpgo.WithPromptDescription("A prompt that repeats its two arguments."),
				mcpgo.WithArgument("arg1", mcpgo.RequiredArgument(), mcpgo.ArgumentDescription("First test argument")),
				mcpgo.WithArgument("arg2", mcpgo.RequiredArgument(), mcpgo.ArgumentDescription("Second test argument"))),
				Handler: fixturePrompt(func(a map[string]string) []mcpgo.PromptMessage {
					return []mcpgo.PromptMessage{mcpgo.NewPromptMessage(mcpgo.RoleUser,
						mcpgo.NewTextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])))}
				})},
			{Prompt: mcpgo.NewPrompt("test_prompt_with_embedded_resource", mcpgo.WithPromptDescription("A prompt embedding the resource it is given."),
				mcpgo.WithArgument("resourceUri", mcpgo.RequiredArgument(), mcpgo.ArgumentDescription("URI of the resource to embed"))),
				Handler: fixturePrompt(func(a map[string]string) []mcpgo.PromptMessage {
					return []mcpgo.PromptMessage{
						mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewEmbeddedResource(mcpgo.TextResourceContents{URI: a["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."})),
						mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent("Please process the embedded resource above.")),
					}
				})},
			{Prompt: mcpgo.NewPrompt("test_prompt_with_image", mcpgo.WithPromptDescription("A prompt carrying an image.")),
				Handler: fixturePrompt(func(map[string]string) []mcpgo.PromptMessage {
					return []mcpgo.PromptMessage{
						mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewImageContent(pngData, "image/png")),
						mcpgo.NewPromptMessage(mcpgo.RoleUser, mcpgo.NewTextContent("Please analyze the image above.")),
					}
				})},
		},
		resources: []server.ServerResource{
			fixtureResource("test://static-text", "text/plain", "This is the content of the static text resource.", ""),
			fixtureResource("test://static-binary", "image/png", "", pngData),
			fixtureResource(fixtureWatched, "text/plain", "A resource to subscribe to.", ""),
		},
		templates: []server.ServerResourceTemplate{{
			Template: mcpgo.NewResourceTemplate(fixtureTemplate, "conformance template",
				mcpgo.WithTemplateDescription("Data for one id."), mcpgo.WithTemplateMIMEType("application/json")),
			Handler: func(_ context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
				id := fmt.Sprint(req.Params.Arguments["id"])
				if ids, isList := req.Params.Arguments["id"].([]string); isList && len(ids) == 1 {
					id = ids[0]
				}
				body, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
				if err != nil {
					return nil, err
				}
				return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}, nil
			},
		}},
		watched: []string{fixtureWatched},
	}
}

// fixtureTool is a tool with every hint set: read-only, closed world.
func fixtureTool(name, desc string, opts ...mcpgo.ToolOption) mcpgo.Tool {
	return mcpgo.NewTool(name, append([]mcpgo.ToolOption{
		mcpgo.WithDescription("MCP conformance fixture: " + desc),
		mcpgo.WithReadOnlyHintAnnotation(true), mcpgo.WithDestructiveHintAnnotation(false),
		mcpgo.WithIdempotentHintAnnotation(true), mcpgo.WithOpenWorldHintAnnotation(false),
	}, opts...)...)
}

func fixturePrompt(messages func(map[string]string) []mcpgo.PromptMessage) server.PromptHandlerFunc {
	return func(_ context.Context, req mcpgo.GetPromptRequest) (*mcpgo.GetPromptResult, error) {
		return mcpgo.NewGetPromptResult("conformance fixture", messages(req.Params.Arguments)), nil
	}
}

// fixtureResource is a text resource, or a binary one when blob (base64)
// is set.
func fixtureResource(uri, mime, text, blob string) server.ServerResource {
	var c mcpgo.ResourceContents = mcpgo.TextResourceContents{URI: uri, MIMEType: mime, Text: text}
	if blob != "" {
		c = mcpgo.BlobResourceContents{URI: uri, MIMEType: mime, Blob: blob}
	}
	return server.ServerResource{
		Resource: mcpgo.NewResource(uri, uri, mcpgo.WithResourceDescription("MCP conformance fixture"), mcpgo.WithMIMEType(mime)),
		Handler: func(context.Context, mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
			return []mcpgo.ResourceContents{c}, nil
		},
	}
}

func fixtureLogging(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	srv := server.ServerFromContext(ctx)
	for _, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if err := srv.SendLogMessageToClient(ctx, mcpgo.NewLoggingMessageNotification(mcpgo.LoggingLevelInfo, "test_tool_with_logging", msg)); err != nil {
			return nil, err
		}
		if err := pause(ctx); err != nil {
			return nil, err
		}
	}
	return mcpgo.NewToolResultText("Tool with logging executed successfully"), nil
}

func fixtureProgress(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	srv := server.ServerFromContext(ctx)
	for _, done := range []float64{0, 50, 100} {
		if m := req.Params.Meta; m != nil && m.ProgressToken != nil {
			params := map[string]any{"progressToken": m.ProgressToken, "progress": done, "total": 100}
			if err := srv.SendNotificationToClient(ctx, string(mcpgo.MethodNotificationProgress), params); err != nil {
				return nil, err
			}
		}
		if err := pause(ctx); err != nil {
			return nil, err
		}
	}
	return mcpgo.NewToolResultText("Tool with progress executed successfully"), nil
}

func pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(fixtureStep):
		return nil
	}
}

// fixtureInput is the key of the one input request a fixture makes.
const fixtureInput = "fixture"

// fixtureSampling asks the client's model through an input request,
// which mcp-go sends as sampling/createMessage to a client older than
// protocol 2026-07-28, re-invoking the handler with the answer.
func fixtureSampling(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	if r := server.SamplingResponse(req.Params.InputResponses, fixtureInput); r != nil {
		answer := fmt.Sprint(r.Content)
		if t, isText := r.Content.(mcpgo.TextContent); isText {
			answer = t.Text
		}
		return mcpgo.NewToolResultText("LLM response: " + answer), nil
	}
	return server.NewInputRequestBuilder("").Sample(fixtureInput, mcpgo.CreateMessageParams{
		Messages:  []mcpgo.SamplingMessage{{Role: mcpgo.RoleUser, Content: mcpgo.NewTextContent(req.GetString("prompt", ""))}},
		MaxTokens: 100,
	}).ToolResult(), nil
}

// fixtureElicit asks the user with the form ask builds from the call, as
// an input request (elicitation/create to an older client), and answers
// with the reply.
func fixtureElicit(ask func(mcpgo.CallToolRequest) mcpgo.ElicitationParams) server.ToolHandlerFunc {
	return func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		if r := server.ElicitationResponse(req.Params.InputResponses, fixtureInput); r != nil {
			content, err := json.Marshal(r.Content)
			if err != nil {
				return nil, err
			}
			return mcpgo.NewToolResultText(fmt.Sprintf("Elicitation completed: action=%s, content=%s", r.Action, content)), nil
		}
		return server.NewInputRequestBuilder("").Elicit(fixtureInput, ask(req)).ToolResult(), nil
	}
}

func elicitUser(req mcpgo.CallToolRequest) mcpgo.ElicitationParams {
	return mcpgo.ElicitationParams{Mode: mcpgo.ElicitationModeForm, Message: req.GetString("message", ""), RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"username": map[string]any{"type": "string", "description": "User's response"},
			"email":    map[string]any{"type": "string", "description": "User's email address"},
		},
		"required": []string{"username", "email"},
	}}
}

func elicitDefaults(mcpgo.CallToolRequest) mcpgo.ElicitationParams {
	return mcpgo.ElicitationParams{Mode: mcpgo.ElicitationModeForm, Message: "Please review and update the form fields with defaults", RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
			"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
			"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
		},
		"required": []string{},
	}}
}

func elicitEnums(mcpgo.CallToolRequest) mcpgo.ElicitationParams {
	titled := func(prefix string, titles ...string) []map[string]any {
		out := make([]map[string]any, len(titles))
		for i, t := range titles {
			out[i] = map[string]any{"const": fmt.Sprintf("%s%d", prefix, i+1), "title": t}
		}
		return out
	}
	options := []string{"option1", "option2", "option3"}
	return mcpgo.ElicitationParams{Mode: mcpgo.ElicitationModeForm, Message: "Please select options from the enum fields", RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": options},
			"titledSingle":   map[string]any{"type": "string", "description": "Select one option with titles", "oneOf": titled("value", "First Option", "Second Option", "Third Option")},
			"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)",
				"enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options", "items": map[string]any{"type": "string", "enum": options}},
			"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles",
				"items": map[string]any{"anyOf": titled("value", "First Choice", "Second Choice", "Third Choice")}},
		},
		"required": []string{},
	}}
}

// redPixelPNG is the 1x1 red image the image scenarios ask for.
func redPixelPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // an in-memory encode of a valid image does not fail
	}
	return b.Bytes()
}

// silentWAV is 10 ms of 8 kHz 16-bit mono silence: a RIFF header and
// 80 zero samples.
func silentWAV() []byte {
	const rate, samples = 8000, 80
	data := samples * 2
	var b bytes.Buffer
	b.WriteString("RIFF")
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	le(uint32(36 + data))
	b.WriteString("WAVEfmt ")
	le(uint32(16))       // fmt chunk size
	le(uint16(1))        // PCM
	le(uint16(1))        // mono
	le(uint32(rate))     // sample rate
	le(uint32(rate * 2)) // byte rate
	le(uint16(2))        // block align
	le(uint16(16))       // bits per sample
	b.WriteString("data")
	le(uint32(data))
	b.Write(make([]byte, data))
	return b.Bytes()
}
