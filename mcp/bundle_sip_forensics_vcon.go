package mcp

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/sip"
	"fieldtap/services/siplint"
	"fieldtap/services/sipvcon"
)

// Bounds of export_vcon.
const (
	vconDefaultDialogs = 20
	// vconMaxDialogs keeps one vCon a conversation (the legs of a call,
	// one customer's calls), not a capture dump: export_capture is that.
	vconMaxDialogs = 100
	// vconMaxAttachment is the largest pcapng inlined (base64url adds a
	// third): a vCon stays small enough to mail and to load whole.
	vconMaxAttachment = 4 << 20
)

type vconDialogsArg int

func (vconDialogsArg) argSchema() *jsonschema.Schema {
	return sipCount("dialogs, oldest first", 1, vconMaxDialogs, vconDefaultDialogs)
}

type exportVConIn struct {
	CallID     callIDArg      `json:"call_id,omitempty" jsonschema:"one dialog; or filter"`
	Filter     filterArg      `json:"filter,omitempty" jsonschema:"the dialogs it matches; or call_id"`
	MaxDialogs vconDialogsArg `json:"max_dialogs,omitempty"`
	NoPcapng   bool           `json:"no_pcapng,omitempty" jsonschema:"no pcapng attachment"`
}

type exportVConOut struct {
	Path           string `json:"path" jsonschema:"the vCon file written (JSON, unsigned form)"`
	Dir            string `json:"dir"`
	Bytes          int    `json:"bytes"`
	UUID           string `json:"uuid" jsonschema:"the vCon's uuid, version 8 as the vCon draft builds it"`
	Dialogs        int    `json:"dialogs"`
	DialogsMatched int    `json:"dialogs_matched"`
	Parties        int    `json:"parties" jsonschema:"From and To parties, deduplicated, and the box"`
	Messages       int    `json:"messages" jsonschema:"SIP messages carried"`
	MessagesGone   int    `json:"messages_evicted" jsonschema:"messages whose bytes the store evicted: not carried"`
	PcapngAttached bool   `json:"pcapng_attached"`
	PcapngPath     string `json:"pcapng_path,omitempty" jsonschema:"the pcapng export_capture would write, kept beside the vCon"`
	PcapngBytes    int64  `json:"pcapng_bytes"`
}

var exportVCon = tool[exportVConIn, exportVConOut]{
	name:  "export_vcon",
	reads: readsSIP | readsMedia,
	desc:  "Write a dialog, or those a filter matches, as a vCon file in the export directory: parties, SIP messages, outcome, lint, pcapng up to 4 MiB.",
	hints: writesFile(),
	run: func(c *call, in exportVConIn) (exportVConOut, error) {
		sn := c.d.SIP.Snapshot()
		ex := c.d.SIPExport
		if (in.CallID == "") == (in.Filter == "") {
			return exportVConOut{}, argErr("call_id", "call_id for one dialog, filter for many", "give exactly one of call_id and filter")
		}
		e, err := in.Filter.compile()
		if err != nil {
			return exportVConOut{}, err
		}
		sel, err := sip.SelectExport(sn, string(in.CallID), func(dl *sip.Dialog) bool { return e.Match(dl) }, count(int(in.MaxDialogs), vconDefaultDialogs))
		if errors.Is(err, sip.ErrNoDialog) {
			return exportVConOut{}, noDialog(in.CallID)
		}
		if err != nil {
			return exportVConOut{}, err
		}
		if len(sel.Dialogs) == 0 {
			return exportVConOut{}, notFound("list_dialogs with the same filter shows what it matches", "the filter matches no dialog")
		}
		if sel.Matched > len(sel.Dialogs) {
			c.warnf("%d dialogs matched; the oldest %d are in the vCon (max_dialogs)", sel.Matched, len(sel.Dialogs))
		}
		now := time.Now()
		out := exportVConOut{Dir: ex.Dir(), Dialogs: len(sel.Dialogs), DialogsMatched: sel.Matched}
		in2 := sipvcon.Input{Snapshot: sn, Now: now, Host: hostName(), RandA: randA()}
		if !in.NoPcapng {
			if err := attachPcapng(c, ex, sn, sel.Dialogs, now, &in2, &out); err != nil {
				return exportVConOut{}, err
			}
		}
		media := c.d.Media.Snapshot(false)
		for _, dl := range sel.Dialogs {
			in2.Calls = append(in2.Calls, sipvcon.Call{D: dl, Lint: siplint.Lint(sn, dl, media)})
		}
		v, n := sipvcon.Build(in2)
		doc, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return exportVConOut{}, fmt.Errorf("encode the vCon: %w", err)
		}
		path, err := ex.WriteFile(now, "vcon", ".vcon.json", append(doc, '\n'))
		if err != nil {
			return exportVConOut{}, fmt.Errorf("export to %s (is store.export_dir writable, with space?): %w", ex.Dir(), err)
		}
		out.Path, out.Bytes, out.UUID, out.Parties, out.MessagesGone = path, len(doc)+1, v.UUID, len(v.Parties), n.MessagesEvicted
		for _, d := range v.Dialog {
			out.Messages += len(d.Body)
		}
		for _, a := range v.Attachments {
			if ms, ok := a.Body.([]sipvcon.Message); ok {
				out.Messages += len(ms)
			}
		}
		if n.MessagesEvicted > 0 {
			c.warnf("%d messages' bytes were evicted by the store's byte bound and are not in the vCon", n.MessagesEvicted)
		}
		return out, nil
	},
}

// attachPcapng writes the dialogs' frames as export_capture does and
// inlines the file when it fits vconMaxAttachment; it warns, and leaves
// the vCon without it, when nothing was found or the file is larger.
func attachPcapng(c *call, ex *sip.Exporter, sn *sip.Snapshot, ds []*sip.Dialog, now time.Time, in *sipvcon.Input, out *exportVConOut) error {
	res, err := ex.Export(c.ctx, sn, ds, c.d.Media.Snapshot(false).CallFlows(ds), now)
	if errors.Is(err, sip.ErrNothingToExport) {
		c.warnf("no frame of these dialogs is in the frame rings or the recorder: the vCon has no pcapng attachment")
		return nil
	}
	if err != nil {
		return fmt.Errorf("export to %s (is store.export_dir writable, with space?): %w", ex.Dir(), err)
	}
	out.PcapngPath, out.PcapngBytes = res.Path, res.Bytes
	var data []byte
	fits := res.Bytes <= vconMaxAttachment // the file as written: no read back past the bound
	if fits {
		if data, fits, err = ex.ReadExport(res.Path, vconMaxAttachment); err != nil {
			return err
		}
	}
	if !fits {
		c.warnf("the pcapng (%d bytes) is over the %d-byte attachment bound: not attached, it is at pcapng_path", res.Bytes, vconMaxAttachment)
		return nil
	}
	in.Pcapng, in.PcapngName, out.PcapngAttached = data, filepath.Base(res.Path), true
	return nil
}

// hostName is the uuid's FQHN and the box party's name.
func hostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "fieldtap.invalid"
	}
	return h
}

func randA() uint16 {
	var b [2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return binary.BigEndian.Uint16(b[:]) & 0x0fff
}
