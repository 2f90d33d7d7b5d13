package answerjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"fieldtap/mcp/untrusted"
)

// answerCases are tools/call answers Append writes itself.
func answerCases() map[string]mcpgo.JSONRPCMessage {
	text := func(s string) []mcpgo.Content { return []mcpgo.Content{mcpgo.NewTextContent(s)} }
	resp := func(id any, r *mcpgo.CallToolResult) mcpgo.JSONRPCMessage {
		return mcpgo.NewJSONRPCResultResponse(mcpgo.NewRequestId(id), r)
	}
	hostile := "quote \" backslash \\ nl \n cr \r tab \t nul \x00 esc \x1b del \x7f c1 \u0085 bidi \u202e ls \u2028 ps \u2029 bad \xff\xfe end <&>"
	return map[string]mcpgo.JSONRPCMessage{
		"envelope":     resp(int64(7), &mcpgo.CallToolResult{Content: text(`{"ok":true,"items":[{"a":"b \"c\""}],"page":{"total_matched":3}}`)}),
		"string id":    resp("req-\"1\"", &mcpgo.CallToolResult{Content: text("x")}),
		"hostile text": resp(int64(1), &mcpgo.CallToolResult{Content: text(hostile)}),
		"error":        resp(int64(2), &mcpgo.CallToolResult{Content: text(`{"ok":false}`), IsError: true}),
		"two blocks":   resp(int64(3), &mcpgo.CallToolResult{Content: append(text("one"), mcpgo.NewTextContent("two"))}),
		"structured":   resp(int64(4), &mcpgo.CallToolResult{Content: text(`{"ok":true}`), RawStructuredContent: json.RawMessage(`{"ok":true}`)}),
		"result type":  resp(int64(5), &mcpgo.CallToolResult{Result: mcpgo.Result{ResultType: mcpgo.ResultTypeComplete}, Content: text("x")}),
		"empty":        resp(int64(6), &mcpgo.CallToolResult{Content: text("")}),
		"meta (2026-07-28)": resp(int64(9), &mcpgo.CallToolResult{Result: mcpgo.Result{ResultType: mcpgo.ResultTypeComplete,
			Meta: &mcpgo.Meta{AdditionalFields: map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "fieldtap", "version": "dev"}}}}, Content: text(`{"ok":true}`)}),
		"no content list": resp(int64(8), &mcpgo.CallToolResult{Content: []mcpgo.Content{}}),
	}
}

// TestAppendAnswerMatchesEncodingJSON: every answer Append writes
// decodes to what mcp-go's encoding/json path writes.
func TestAppendAnswerMatchesEncodingJSON(t *testing.T) {
	for name, msg := range answerCases() {
		t.Run(name, func(t *testing.T) {
			got, ok := Append(nil, msg)
			if !ok {
				t.Fatal("not written")
			}
			want, err := json.Marshal(msg)
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("invalid JSON %s: %v", got, err)
			}
			json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// TestAppendAnswerLeavesTheRestToEncodingJSON: whatever it does not
// know it declines, and writes nothing.
func TestAppendAnswerLeavesTheRestToEncodingJSON(t *testing.T) {
	id := mcpgo.NewRequestId(int64(1))
	for name, msg := range map[string]mcpgo.JSONRPCMessage{
		"other result":   mcpgo.NewJSONRPCResultResponse(id, mcpgo.ListToolsResult{}),
		"error":          mcpgo.NewJSONRPCError(id, mcpgo.INVALID_PARAMS, "bad", nil),
		"structured any": mcpgo.NewJSONRPCResultResponse(id, &mcpgo.CallToolResult{StructuredContent: map[string]any{}}),
		"image":          mcpgo.NewJSONRPCResultResponse(id, &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.NewImageContent("AA==", "image/png")}}),
		"annotated":      mcpgo.NewJSONRPCResultResponse(id, &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.TextContent{Type: "text", Annotated: mcpgo.Annotated{Annotations: &mcpgo.Annotations{}}}}}),
		"input requests": mcpgo.NewJSONRPCResultResponse(id, &mcpgo.CallToolResult{MultiRoundTripResult: mcpgo.MultiRoundTripResult{RequestState: "s"}}),
	} {
		if out, ok := Append([]byte("x"), msg); ok || string(out) != "x" {
			t.Errorf("%s: written (%q)", name, out)
		}
	}
}

// FuzzAppendJSONString: any string, valid UTF-8 or not, is written as
// valid JSON that decodes to what encoding/json's encoding decodes to.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "0123456789abcdef\x01xyz", "abcdefgh\"ijklmnop\\qrstuvwxyzé⟦x⟧\xe2\x80", "{\"k\":\"⟦v⟧\"}\u2028{\"k\":1}", "\"\\\n\x00\x1f\x7f", "\u2028\u2029", "\xff", "é\u202e<>&", strings.Repeat("a\"", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendJSONString(nil, s)
		var g, w string
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%q written as invalid JSON %s: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		json.Unmarshal(want, &w)
		if g != w {
			t.Errorf("%q decodes to %q, encoding/json's to %q", s, g, w)
		}
		// The table path and the rune path write the same bytes.
		if runes := append(appendEscapedRunes([]byte{'"'}, s), '"'); !bytes.Equal(got, runes) {
			t.Errorf("%q written as %s, by the rune path as %s", s, got, runes)
		}
	})
}

// BenchmarkAppendAnswer against json.Marshal on a 100-row page's answer.
func BenchmarkAppendAnswer(b *testing.B) {
	row := `{"call_id":"a84b4c76e66710@pc33.atlanta.example.com","state":"ended","final_code":200,"from_user":"14155551234","started":"2026-12-01T18:17:03.417Z","methods":["INVITE","ACK","BYE"],"user_agent":"` + untrusted.Open + `Asterisk PBX` + untrusted.Close + `","pdd_ms":123.4}`
	text := `{"ok":true,"items":[` + strings.TrimSuffix(strings.Repeat(row+",", 100), ",") + `]}`
	msg := mcpgo.NewJSONRPCResultResponse(mcpgo.NewRequestId(int64(7)), &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.NewTextContent(text)}})
	b.Run("Append", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		var buf []byte
		for b.Loop() {
			buf, _ = Append(buf[:0], msg)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			json.Marshal(msg)
		}
	})
}
