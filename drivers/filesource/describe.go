package filesource

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
)

// Bounds of Describe: a listing describes up to a thousand files, so each
// costs at most a head, a tail and one bounded scan.
const (
	// MaxScanBytes is the largest pcap or pcapng file whose last frame
	// Describe finds: neither format has an index, so the last frame is
	// found only by reading every record before it. A caller describing
	// many files passes less once its own budget is spent.
	MaxScanBytes = 16 << 20
	// tailBytes is how much of a text log's end is read for its last line.
	tailBytes = 64 << 10
)

// Description is what Describe found: the format as Detect and the
// --source path see it (pcap and pcapng told apart), the first and last
// frame times, and why a time is missing.
type Description struct {
	Format Format // "" when Detect recognises none
	// Container is pcap or pcapng for FormatPcap.
	Container pcapfile.Format
	First     time.Time // zero: not found
	Last      time.Time // zero: not found or not computed
	// LastNotComputed says why Last was not looked for.
	LastNotComputed string
	// Refused is Detect's reason when Format is "".
	Refused string
}

// Describe reads a file's head (and its tail, or the whole of a pcap no
// larger than scanBytes, at most MaxScanBytes) and says what it holds.
func Describe(path string, scanBytes int64) (Description, error) {
	f, err := os.Open(path)
	if err != nil {
		return Description{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Description{}, err
	}
	format, err := Detect(f)
	if err != nil {
		return Description{Refused: err.Error()}, nil
	}
	d := Description{Format: format}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return d, err
	}
	switch format {
	case FormatPcap:
		return describePcap(f, st.Size(), min(scanBytes, MaxScanBytes), d)
	case FormatCandump:
		d.First, d.Last = textSpan(f, st.Size(), candumpTime)
	case FormatJ1708:
		d.First, d.Last = textSpan(f, st.Size(), j1708Time)
	}
	return d, nil
}

func describePcap(f *os.File, size, scanBytes int64, d Description) (Description, error) {
	rd, err := pcapfile.NewReader(bufio.NewReader(f))
	if err != nil {
		return d, nil // Detect saw the magic; a broken header has no frames to time
	}
	d.Container = rd.Format()
	rec, err := rd.Next()
	if err != nil {
		return d, nil
	}
	d.First, d.Last = rec.Time, rec.Time
	if size > scanBytes {
		d.Last = time.Time{}
		d.LastNotComputed = fmt.Sprintf("%s has no index and the file is %d bytes, over the %d this read may scan to find its last frame", d.Container, size, scanBytes)
		return d, nil
	}
	for {
		rec, err := rd.Next()
		if err != nil {
			return d, nil // io.EOF, or a damaged record: the last good frame stands
		}
		d.Last = rec.Time
	}
}

// textSpan finds the first line of head that parses and the last line
// of the tail that does.
func textSpan(f *os.File, size int64, at func([]byte) (time.Time, bool)) (first, last time.Time) {
	sc := bufio.NewScanner(io.LimitReader(f, tailBytes))
	for sc.Scan() {
		if t, ok := at(sc.Bytes()); ok {
			first = t
			break
		}
	}
	off := max(size-tailBytes, 0)
	tail := make([]byte, size-off)
	if _, err := f.ReadAt(tail, off); err != nil && !errors.Is(err, io.EOF) {
		return first, time.Time{}
	}
	for len(tail) > 0 {
		i := bytes.LastIndexByte(bytes.TrimRight(tail, "\r\n"), '\n')
		line := tail[i+1:]
		if t, ok := at(line); ok && (i >= 0 || off == 0) {
			return first, t
		}
		if i < 0 {
			break
		}
		tail = tail[:i]
	}
	return first, time.Time{}
}

func candumpTime(line []byte) (time.Time, bool) {
	var r wire.CandumpRecord
	if err := wire.DecodeCandump(bytes.TrimSpace(line), &r); err != nil {
		return time.Time{}, false
	}
	return r.Time, true
}

func j1708Time(line []byte) (time.Time, bool) {
	l, err := wire.ParseJ1708Line(line)
	return l.Time, err == nil
}
