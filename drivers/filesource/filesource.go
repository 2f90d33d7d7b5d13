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

	"fieldtap/drivers/canfiles"
	"fieldtap/drivers/canlog"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/j1708"
	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
)

// sniffLines is how many leading text lines may be blank or comments before
// the content decides; a log with more preamble than that is not one we know.
// TRC and ASC comment lines (; and //) count against the larger
// sniffCommentLines: PEAK's and python-can's TRC 1.x headers run to twenty.
const (
	sniffLines        = 16
	sniffCommentLines = 64
)

// Format is what Detect found a file to hold.
type Format string

// Formats Detect tells apart.
const (
	FormatPcap    Format = "pcap" // pcap or pcapng
	FormatCandump Format = "candump"
	FormatJ1708   Format = "j1708" // a J1708 (or J2497) text log
	// Vendor CAN logs (drivers/canfiles).
	FormatASC      = Format(canfiles.ASC)      // Vector ASC
	FormatBLF      = Format(canfiles.BLF)      // Vector BLF
	FormatTRC      = Format(canfiles.TRC)      // PEAK TRC 1.0 to 2.1
	FormatSavvyCSV = Format(canfiles.SavvyCSV) // SavvyCAN's native (GVRET) CSV
)

// known names every kind Detect takes, for its refusals.
const known = "pcap, pcapng, candump -l, J1708 log, Vector ASC or BLF, PEAK TRC, SavvyCAN CSV"

// Open returns a Source for path named name. It fails with an error naming
// the file when the content is none of: pcap, pcapng, candump -l, J1708
// log, Vector ASC or BLF, PEAK TRC, SavvyCAN CSV.
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
	case FormatASC, FormatBLF, FormatTRC, FormatSavvyCSV:
		return canfiles.New(name, path, canfiles.Format(format), log), nil
	}
	return j1708.NewLogSource(name, path, log), nil
}

// Detect reads the head of a capture and says what it holds: a pcap,
// pcapng or BLF magic number, or else the first of at most sniffLines text
// lines that is neither blank nor a # comment decides (a candump line, a
// J1708 log line, or the first line of an ASC, TRC or SavvyCAN CSV file,
// canfiles.SniffLine); ; and // comment lines before it, at most
// sniffCommentLines, are read past. It reads lines of bufio's default
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
	if canfiles.Sniff(head) == canfiles.BLF {
		return FormatBLF, nil
	}
	comments := 0
	for lines := 0; lines < sniffLines; {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return "", fmt.Errorf("at byte offset 0: a line longer than %d bytes: not a text capture fieldtap reads", br.Size())
		}
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))) // a Windows tool's byte order mark
		vendor := canfiles.NotVendor
		if len(line) > 0 && line[0] != '#' {
			vendor = canfiles.SniffLine(line)
		}
		switch {
		case len(line) == 0 || line[0] == '#':
			lines++
		case canlog.Looks(line):
			return FormatCandump, nil
		case looksJ1708(line):
			return FormatJ1708, nil
		case vendor != canfiles.NotVendor:
			return Format(vendor), nil
		case line[0] == ';' || bytes.HasPrefix(line, []byte("//")):
			if comments++; comments > sniffCommentLines {
				return "", fmt.Errorf("at byte offset 0: more than %d comment lines and no line of a capture fieldtap reads (%s)", sniffCommentLines, known)
			}
		default:
			return "", fmt.Errorf("at byte offset 0: not a capture fieldtap reads (%s); first line %.40q", known, line)
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
