package mcp

import (
	"encoding/base64"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/upload"
)

type uploadOffsetArg int64

func (uploadOffsetArg) argSchema() *jsonschema.Schema {
	return intSchema("where this chunk starts: the next_offset the box last answered", 0, 1<<53)
}

type uploadPayloadArg string

func (uploadPayloadArg) argSchema() *jsonschema.Schema {
	most := base64.StdEncoding.EncodedLen(upload.MaxChunk)
	return &jsonschema.Schema{Type: "string", MaxLength: &most, Description: "the chunk's bytes, standard base64"}
}

// The payload sorts last so the audit record, cut at its bound, keeps
// the id and the offset.
type uploadChunkIn struct {
	ID      uploadIDArg      `json:"id"`
	Offset  uploadOffsetArg  `json:"offset"`
	Payload uploadPayloadArg `json:"payload"`
}

type uploadChunkOut struct {
	Next int64 `json:"next_offset" jsonschema:"offset the next chunk must start at; the size when all is sent"`
}

var uploadChunk = tool[uploadChunkIn, uploadChunkOut]{
	name:  "upload_chunk",
	reads: readsNothing,
	desc:  "Send one chunk of an upload at the offset the box stated; a wrong offset is refused naming the right one.",
	hints: writesFile(),
	run: func(c *call, in uploadChunkIn) (uploadChunkOut, error) {
		t, err := uploadsOf(c.d)
		if err != nil {
			return uploadChunkOut{}, err
		}
		data, err := base64.StdEncoding.DecodeString(string(in.Payload))
		if err != nil {
			return uploadChunkOut{}, argErr("payload", "standard base64 (RFC 4648, with padding)", "not base64: %v", err)
		}
		next, err := t.Chunk(string(in.ID), int64(in.Offset), data)
		if err != nil {
			return uploadChunkOut{}, uploadErr(err)
		}
		return uploadChunkOut{Next: next}, nil
	},
}
