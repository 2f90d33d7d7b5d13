package recorder

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fieldtap/services/recorder/pcapng"
)

// FuzzRecover leaves arbitrary bytes as the open segment of a killed
// recorder: Open must recover without failing or panicking, keep only
// whole blocks (the kept file scans to its end), and read back exactly
// the frames the scan found.
func FuzzRecover(f *testing.F) {
	seed := pcapng.AppendSHB(nil, "seed")
	seed = pcapng.AppendIDB(seed, pcapng.Interface{Link: 1, Name: "span0"})
	seed = pcapng.AppendEPB(seed, pcapng.Packet{Interface: 0, Time: t0, Data: []byte{1, 2, 3}})
	f.Add(seed)
	f.Add(seed[:len(seed)-5])
	f.Add(append(append([]byte{}, seed...), 0, 0, 0, 0, 0, 0, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		name := segmentName(DefaultPrefix, 0, t0)
		if err := os.WriteFile(filepath.Join(dir, name), b, fileMode); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, stateFile), []byte(`{"running":true}`), fileMode)
		r, err := Open(Options{Dir: dir, Now: func() time.Time { return t0.Add(time.Hour) }})
		if err != nil {
			t.Fatalf("recovery failed: %v", err)
		}
		defer r.Close()
		segs := r.Segments()
		var frames uint64
		for _, s := range segs {
			frames += s.Frames
			kept, err := os.ReadFile(filepath.Join(dir, s.Name))
			if err != nil {
				t.Fatal(err)
			}
			if s.Bytes != int64(len(kept)) {
				t.Fatalf("index says %d bytes, the file has %d", s.Bytes, len(kept))
			}
		}
		var read uint64
		if _, err := r.Scan(context.Background(), Query{From: time.Unix(0, 0), To: time.Unix(0, math.MaxInt64)}, func(*Frame) error { read++; return nil }); err != nil {
			t.Fatal(err)
		}
		if read != frames {
			t.Fatalf("the index counts %d frames, a scan reads %d", frames, read)
		}
	})
}
