package mcp

type uploadFinishIn struct {
	ID uploadIDArg `json:"id"`
}

type uploadFinishOut struct {
	Area   string `json:"area"`
	Name   string `json:"name" jsonschema:"the name inside its area, as list_files, open_capture and dbc_load take it"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256" jsonschema:"verified against the bytes received"`
	Kind   string `json:"kind" jsonschema:"what the area's check found: pcap, pcapng, candump, j1708 (the --source detector), dbc or tls_keylog"`
}

var uploadFinish = tool[uploadFinishIn, uploadFinishOut]{
	name:  "upload_finish",
	reads: readsNothing,
	desc:  "Verify an upload's size, SHA-256 and content (the --source detector; DBC or TLS key log for data) and put it in place.",
	hints: writesFile(),
	run: func(c *call, in uploadFinishIn) (uploadFinishOut, error) {
		t, err := uploadsOf(c.d)
		if err != nil {
			return uploadFinishOut{}, err
		}
		d, err := t.Finish(string(in.ID))
		if err != nil {
			return uploadFinishOut{}, uploadErr(err)
		}
		return uploadFinishOut{Area: d.Area, Name: d.Name, Bytes: d.Bytes, SHA256: d.SHA256, Kind: d.Kind}, nil
	},
}
