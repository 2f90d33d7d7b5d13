package sandbox

import "path"

// MediaType is the media type of a file the box writes, by its extension:
// the MCP resources, the tools' resource links and the HTTP download all
// name a file's type through it, so they agree.
func MediaType(name string) string {
	switch path.Ext(name) {
	case ".pcapng":
		return "application/vnd.tcpdump.pcap" // pcapng shares pcap's registration
	case ".wav":
		return "audio/wav"
	case ".json":
		return "application/json"
	case ".txt", ".sha256", ".log":
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}
