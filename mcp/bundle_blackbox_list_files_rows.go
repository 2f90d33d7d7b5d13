package mcp

import "time"

// fileRow is one file an agent may name: where it is, what it holds and,
// for a capture, the time it spans.
type fileRow struct {
	Area     string    `json:"area" jsonschema:"captures (store.capture_dir: open_capture), data (store.data_dir: dbc_load, TLS key logs), exports (export tools' files), evidence (sealed bundles)"`
	Name     string    `json:"name" jsonschema:"the name inside its area, as open_capture, dbc_load and fieldtap://files/AREA/NAME take it"`
	Bytes    int64     `json:"bytes"`
	Modified time.Time `json:"modified"`
	Kind     string    `json:"kind" jsonschema:"what the --source detector reads in its head: pcap, pcapng, candump, j1708; other when it is none of them"`
	// First and Last are null with times_note saying why.
	First     *time.Time `json:"first_frame" jsonschema:"time of its first frame; null for a file that is no capture or has no frame"`
	Last      *time.Time `json:"last_frame" jsonschema:"time of its last frame; null when not found or not computed (times_note)"`
	TimesNote string     `json:"times_note,omitempty" jsonschema:"why a frame time is null"`

	key rowKey
}
