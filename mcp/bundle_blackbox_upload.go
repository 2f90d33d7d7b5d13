package mcp

import (
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/upload"
)

// The upload tools share the table's refusals and the upload id.

type uploadIDArg string

func (uploadIDArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: "^[0-9a-f]{16}$", Description: "the id upload_begin answered"}
}

// uploadsOf is the upload table, or UNAVAILABLE when uploads are off.
func uploadsOf(d Deps) (*upload.Table, error) {
	if d.BlackBox.Uploads == nil {
		return nil, unavailable("upload table", "uploads need store.capture_dir and store.data_dir the daemon can write (docs/configuration.md#uploads-files)")
	}
	return d.BlackBox.Uploads, nil
}

// uploadErr renders the table's refusals as UPLOAD_REFUSED; anything
// else failed on the box.
func uploadErr(err error) error {
	if errors.Is(err, upload.ErrRefused) {
		return failErr(CodeUploadRefused, err.Error(), fmt.Sprintf("chunks of at most %d bytes in order from the offset the box states; files.max_file_bytes and files.max_total_bytes are the quotas (docs/configuration.md#uploads-files)", upload.MaxChunk))
	}
	return err
}
