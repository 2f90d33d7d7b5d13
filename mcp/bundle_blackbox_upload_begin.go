package mcp

import (
	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/upload"
)

type uploadAreaArg string

func (uploadAreaArg) argSchema() *jsonschema.Schema {
	return enumArg("captures (store.capture_dir: pcap, pcapng, candump -l, J1708 logs) or data (store.data_dir: DBC databases, TLS key logs named *.keys or *.keylog)", []string{"captures", "data"})
}

type uploadNameArg string

func (uploadNameArg) argSchema() *jsonschema.Schema {
	one, most := 1, 255
	return &jsonschema.Schema{Type: "string", MinLength: &one, MaxLength: &most, Description: "plain file name it lands under; no directory, no leading dot; an existing file is never replaced"}
}

type uploadSizeArg int64

func (uploadSizeArg) argSchema() *jsonschema.Schema {
	return intSchema("the whole file's size in bytes, at most files.max_file_bytes", 1, 1<<53)
}

type sha256Arg string

func (sha256Arg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: "^[0-9a-fA-F]{64}$", Description: "the whole file's SHA-256, 64 hex digits"}
}

type uploadBeginIn struct {
	Area   uploadAreaArg `json:"area"`
	Name   uploadNameArg `json:"name"`
	Size   uploadSizeArg `json:"size_bytes"`
	SHA256 sha256Arg     `json:"sha256"`
}

type uploadBeginOut struct {
	ID       string `json:"id" jsonschema:"the upload's id for upload_chunk and upload_finish"`
	Next     int64  `json:"next_offset" jsonschema:"offset the next chunk must start at: 0, or where a resumed upload stands"`
	Resumed  bool   `json:"resumed" jsonschema:"an upload of the same area, name, size and digest was in progress and goes on"`
	MaxChunk int    `json:"max_chunk_bytes" jsonschema:"most one chunk may carry, decoded"`
}

var uploadBegin = tool[uploadBeginIn, uploadBeginOut]{
	name:  "upload_begin",
	reads: readsNothing,
	desc:  "Start (or resume) uploading a file into captures or data; answers the id and the offset to send from.",
	hints: writesFile(),
	run: func(c *call, in uploadBeginIn) (uploadBeginOut, error) {
		t, err := uploadsOf(c.d)
		if err != nil {
			return uploadBeginOut{}, err
		}
		b, err := t.Begin(string(in.Area), string(in.Name), int64(in.Size), string(in.SHA256))
		if err != nil {
			return uploadBeginOut{}, uploadErr(err)
		}
		return uploadBeginOut{ID: b.ID, Next: b.Next, Resumed: b.Resumed, MaxChunk: upload.MaxChunk}, nil
	},
}
