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

// Format is what Detect found a file to hold.
type Format string

// Formats Detect tells apart.
const (
	FormatPcap    Format = "pcap" // pcap or pcapng
	FormatCandump Format = "candump"
	FormatJ1708   Format = "j1708" // a J1708 (or J2497) text log
)

// Open returns a Source for path named name. It fails with an error naming
// the file when the content is none of: pcap, pcapng, candump -l, J1708 log.
func Open(name, path string, log *slog.Logger) (capture.Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	format, err := Detect(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch format {
	case FormatPcap:
		return pcapfile.New(name, path), nil
	case FormatCandump:
		return canlog.New(name, path, log), nil
	}
	return j1708.NewLogSource(name, path, log), nil
}

// Detect reads the head of a capture and says what it holds: a pcap or
// pcapng magic number, or else the first of at most sniffLines text lines
// that is neither blank nor a # comment decides (a candump line or a
// J1708 log line). It reads at most sniffLines lines of bufio's default
// buffer each. An error says why the head is none of these.
func Detect(r io.Reader) (Format, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(4)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	if pcapfile.Sniff(head) != "" {
		return FormatPcap, nil
	}
	for range sniffLines {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return "", fmt.Errorf("at byte offset 0: a line longer than %d bytes: not a text capture fieldtap reads", br.Size())
		}
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0 || line[0] == '#':
		case canlog.Looks(line):
			return FormatCandump, nil
		case looksJ1708(line):
			return FormatJ1708, nil
		default:
			return "", fmt.Errorf("at byte offset 0: not a capture fieldtap reads (pcap, pcapng, candump -l or J1708 log); first line %.40q", line)
		}
		if err != nil {
			break
		}
	}
	return "", errors.New("at byte offset 0: empty or unrecognised capture file")
}

func looksJ1708(line []byte) bool {
	_, err := wire.ParseJ1708Line(line)
	return err == nil
}
