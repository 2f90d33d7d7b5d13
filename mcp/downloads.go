package mcp

// FilesPath is where the HTTP endpoint serves sandbox files: GET
// FilesPath+NAME, NAME as the sandbox takes it (exports/…,
// evidence/ID/FILE, captures/…). Answers name it in their resource
// links; the daemon mounts the front door's file server there.
const FilesPath = "/files/"

// Downloads is the HTTP GET /files counters capture_status shows: the
// front door's file server (mcp/front), which the daemon adapts.
type Downloads interface {
	Stats() FileStats
}

// FileStats is what capture_status shows of the downloads.
type FileStats struct {
	Served  uint64 `json:"served" jsonschema:"files answered 200 or 206"`
	Bytes   uint64 `json:"bytes" jsonschema:"body bytes written"`
	Active  int64  `json:"active"`
	Max     int    `json:"max_concurrent"`
	Busy    uint64 `json:"refused_busy" jsonschema:"refused 503: max_concurrent downloads were running"`
	Refused uint64 `json:"refused_name" jsonschema:"refused 403: outside the sandbox, a symbolic link, hidden, or an evidence file whose bundle no longer matches its digests"`
	Missing uint64 `json:"not_found"`
	Auth    uint64 `json:"refused_auth" jsonschema:"refused 401: no or a wrong bearer token"`
	Failed  uint64 `json:"failed" jsonschema:"answered 500"`
}
