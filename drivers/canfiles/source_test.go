package canfiles

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
	"fieldtap/drivers/wire"
)

// TestSourceReplaysAFile runs a Source over the ASC sample: its frames
// come out as SocketCAN frames at their times, and what was not read is
// in the port's error counters by reason.
func TestSourceReplaysAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sample.asc")
	if err := os.WriteFile(path, []byte(ascSample), 0o644); err != nil {
		t.Fatal(err)
	}
	var c capture.Counters
	h := capture.NewHandoff(1<<10, &c)
	s := New("file1", path, ASC, slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan []capture.Frame)
	go func() {
		var got []capture.Frame
		for f := range capturetest.Frames(h) {
			got = append(got, f)
		}
		done <- got
	}()
	if err := s.Run(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	h.Close()
	frames := <-done
	want := read(t, ReadASC, []byte(ascSample)).frames
	if len(frames) != len(want) {
		t.Fatalf("%d frames, want %d", len(frames), len(want))
	}
	for i, f := range frames {
		id, flags, data, err := wire.DecodeCANFD(f.Data)
		if err != nil || id != want[i].ID || flags != want[i].Flags || string(data) != string(want[i].Data) || !f.Time.Equal(want[i].Time) || f.Link != wire.LinkCANSocketCAN {
			t.Errorf("frame %d: %#x % X at %v (%v); want %#x % X at %v", i, id, data, f.Time, err, want[i].ID, want[i].Data, want[i].Time)
		}
	}
	st := s.Stats()
	if st.Errors[ReasonOther] != 3 || st.Errors[ReasonMalformed] != 2 || !st.Exhausted {
		t.Errorf("stats %+v", st)
	}
	if s.Kind() != capture.KindCAN || s.Live() || s.Origin() != "file:"+path {
		t.Errorf("kind %v live %v origin %s", s.Kind(), s.Live(), s.Origin())
	}
}

func TestSniff(t *testing.T) {
	for line, want := range map[string]Format{
		"date Wed Jun 12 03:04:56.789 pm 2019":                       ASC,
		"base hex  timestamps absolute":                              ASC,
		";$FILEVERSION=1.1":                                          TRC,
		"1)      1841  0001  8  00 00 00 00 00 00 00 00":             TRC,
		"Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8": SavvyCSV,
		";   Start time: 12.06.2019":                                 NotVendor,
		"(1608041700.316550) can0 18FECA00#0102":                     NotVendor,
		"hello world":                                                NotVendor,
		"1) not a frame":                                             NotVendor,
	} {
		if got := SniffLine([]byte(line)); got != want {
			t.Errorf("SniffLine(%q) = %q, want %q", line, got, want)
		}
	}
	if Sniff([]byte("LOGG\x90\x00")) != BLF || Sniff([]byte("LOBJ")) != NotVendor {
		t.Error("Sniff takes LOGG and only LOGG")
	}
}
