package mcp

import (
	"context"
	"fmt"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/sip"
)

const (
	toolRenderLadder  = "render_ladder"
	toolExportCapture = "export_capture"
)

// Bounds of the ladder and export tools.
const (
	ladderDefaultMessages = 200
	ladderMaxMessages     = sip.DefaultMessagesPerDialog
	exportDefaultDialogs  = 1000
	exportMaxDialogs      = 10_000
)

type ladderIn struct {
	CallID      string `json:"call_id" jsonschema:"the Call-ID"`
	MaxMessages int    `json:"max_messages,omitempty" jsonschema:"arrows drawn, default 200, at most 500"`
}

type ladderOut struct {
	CallID string `json:"call_id"`
	// Ladder is the rendered diagram: lanes are IP:port endpoints, arrows
	// carry start lines (sender text).
	Ladder string `json:"ladder" untrusted:"body"`
}

type exportIn struct {
	CallID     string `json:"call_id,omitempty" jsonschema:"export this dialog; or give filter"`
	Filter     string `json:"filter,omitempty" jsonschema:"export every dialog matching this filter (docs/filter.md)"`
	MaxDialogs int    `json:"max_dialogs,omitempty" jsonschema:"most dialogs in one file, oldest first; default 1000, at most 10000"`
}

type exportOut struct {
	sip.ExportResult
	Dir            string `json:"dir"`
	DialogsMatched int    `json:"dialogs_matched"`
}

func writes() mcpgo.ToolOption {
	// It writes a new file in the export directory and changes nothing
	// else: not read-only, not destructive, a new file each call.
	return mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
		ReadOnlyHint:    mcpgo.ToBoolPtr(false),
		DestructiveHint: mcpgo.ToBoolPtr(false),
		IdempotentHint:  mcpgo.ToBoolPtr(false),
		OpenWorldHint:   mcpgo.ToBoolPtr(false),
	})
}

func sipExportTools(d Deps) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolRenderLadder,
				mcpgo.WithDescription("A text ladder diagram of one dialog: one lane per IP:port endpoint, one arrow per kept message with its start line and time since the first message; retransmissions marked (rtx)."),
				inputSchema[ladderIn](), readOnly(), outputSchema[ladderOut]()),
			Handler: handler(d, func(ctx context.Context, in ladderIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := sipSnapshot(d)
				if f != nil {
					return f
				}
				n, err := sipLimit(in.MaxMessages, ladderDefaultMessages, ladderMaxMessages)
				if err != nil {
					return fail(src, CodeInvalidArgument, "max_messages: "+err.Error(), "get_dialog pages through long dialogs")
				}
				dl, f := lookupDialog(d, sn, in.CallID)
				if f != nil {
					return f
				}
				return ok(src, ladderOut{CallID: dl.CallID, Ladder: sip.RenderLadder(sn, dl, n)})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolExportCapture,
				mcpgo.WithDescription("Write the captured frames (SIP, RTP, RTCP) of one dialog (call_id) or of every dialog matching a filter to a new pcapng file in the box's export directory, for Wireshark or tshark. Reports the path and what could not be included (frames evicted from the frame ring, messages past the store's caps)."),
				inputSchema[exportIn](), writes(), outputSchema[exportOut]()),
			Handler: handler(d, func(ctx context.Context, in exportIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := sipSnapshot(d)
				if f != nil {
					return f
				}
				if d.SIPExport == nil {
					return fail(src, codeNoSIPStore, "this box has no export directory (no Ethernet port)", "check capture_status for ethernet ports")
				}
				if (in.CallID == "") == (in.Filter == "") {
					return fail(src, CodeInvalidArgument, "give exactly one of call_id and filter", "call_id for one dialog, filter for many")
				}
				maxN, err := sipLimit(in.MaxDialogs, exportDefaultDialogs, exportMaxDialogs)
				if err != nil {
					return fail(src, CodeInvalidArgument, "max_dialogs: "+err.Error(), "export in several files with narrower filters")
				}
				var ds []*sip.Dialog
				matched := 0
				if in.CallID != "" {
					dl, f := lookupDialog(d, sn, in.CallID)
					if f != nil {
						return f
					}
					ds, matched = []*sip.Dialog{dl}, 1
				} else {
					e, f := compileFilter(d, in.Filter)
					if f != nil {
						return f
					}
					for _, dl := range sn.Dialogs {
						if e.Match(dl) {
							matched++
							if len(ds) < maxN {
								ds = append(ds, dl)
							}
						}
					}
				}
				media := mediaFlows(d, ds)
				res, err := d.SIPExport.Export(ctx, sn, ds, media, time.Now())
				if err != nil {
					return fail(src, CodeInternal, "export: "+err.Error(), "check store.export_dir is writable and has space")
				}
				out := exportOut{ExportResult: res, Dir: d.SIPExport.Dir(), DialogsMatched: matched}
				var warn []string
				if matched > len(ds) {
					warn = append(warn, fmt.Sprintf("%d dialogs matched; the file holds the oldest %d (max_dialogs)", matched, len(ds)))
				}
				if res.MessagesMissing > 0 || res.MessagesEvicted > 0 || res.MessagesShed > 0 {
					warn = append(warn, fmt.Sprintf("not in the file: %d messages whose frames neither the frame ring nor the recorder holds, %d messages evicted, %d past the per-dialog cap", res.MessagesMissing, res.MessagesEvicted, res.MessagesShed))
				}
				for _, dl := range ds {
					if dl.Transport != sip.TransportUDP {
						warn = append(warn, "SIP over TCP/WebSocket: the file holds the segment that completed each message, not every segment of the stream")
						break
					}
				}
				warn = append(warn, mediaExportWarnings(d, res)...)
				if res.Truncated {
					warn = append(warn, fmt.Sprintf("cut at %d frames or %d MiB; narrow the filter", sip.MaxExportFrames, sip.MaxExportBytes>>20))
				}
				return ok(src, out, warn...)
			}),
		},
	}
}

// mediaFlows lists the RTP and RTCP flows of ds from the media analyser;
// nil when the box has none.
func mediaFlows(d Deps, ds []*sip.Dialog) []sip.MediaFlow {
	if d.Media == nil {
		return nil
	}
	sn := d.Media.Snapshot(false)
	var out []sip.MediaFlow
	for _, dl := range ds {
		out = append(out, sn.Flows(dl.CallID)...)
	}
	return out
}

// mediaExportWarnings says what of the dialogs' media is not in the file.
func mediaExportWarnings(d Deps, res sip.ExportResult) []string {
	var w []string
	if d.Media == nil {
		w = append(w, "no media analyser: the file holds SIP only")
	}
	if res.MediaFramesMissing > 0 {
		w = append(w, fmt.Sprintf("%d RTP/RTCP datagrams counted on these calls are not in the file: their frames left the frame ring (store.frames_per_port, store.bytes_per_port) or were not kept whole", res.MediaFramesMissing))
	}
	if res.ScanCut {
		w = append(w, fmt.Sprintf("scan stopped at %d frames; frames from %v on were not examined: narrow the filter", sip.MaxExportScanFrames, res.ScanCutAt))
	}
	return w
}
