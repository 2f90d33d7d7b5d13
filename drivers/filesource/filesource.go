// Package filesource opens a capture file as a read-only port, choosing the
// reader from the file's content rather than its name.
package filesource

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"fieldtap/drivers/canlog"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/j1708"
	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
)

// sniffLines is how many leading text lines may be blank or comments before
// the content decides; a log with more preamble than that is not one we know.
const sniffLines = 16

// Open returns a Source for path named name. It fails with an error naming
// the file when the content is none of: pcap, pcapng, candump -l, J1708 log.
func Open(name, path string, log *slog.Logger) (capture.Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if pcapfile.Sniff(head) != "" {
		return pcapfile.New(name, path), nil
	}
	for range sniffLines {
		line, err := br.ReadSlice('\n')
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0 || line[0] == '#':
		case canlog.Looks(line):
			return canlog.New(name, path, log), nil
		case looksJ1708(line):
			return j1708.NewLogSource(name, path, log), nil
		default:
			return nil, fmt.Errorf("%s: at byte offset 0: not a capture fieldtap reads (pcap, pcapng, candump -l or J1708 log); first line %.40q", path, line)
		}
		if err != nil {
			break
		}
	}
	return nil, fmt.Errorf("%s: at byte offset 0: empty or unrecognised capture file", path)
}

func looksJ1708(line []byte) bool {
	_, err := wire.ParseJ1708Line(line)
	return err == nil
}
