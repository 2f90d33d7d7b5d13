package dbc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// giveUp bounds a wait for something that must happen; not a measurement.
const giveUp = 30 * time.Second

// bigDBC is a J1939-style database of msgs messages of sigs 8-bit
// signals each: 8,100 × 5 is a 3 MB file, the size that once filled the
// box when loaded 16 times at once.
func bigDBC(msgs, sigs int) []byte {
	var b strings.Builder
	b.WriteString("VERSION \"\"\n\nBU_: ECU\n\n")
	for m := range msgs {
		fmt.Fprintf(&b, "BO_ %d MESSAGE_%05d: %d ECU\n", 0x80000000|uint32(0x18F00000+m), m, max(8, sigs))
		for s := range sigs {
			fmt.Fprintf(&b, " SG_ SIGNAL_%05d_%d : %d|8@1+ (0.5,-40) [-40|87.5] \"degC\" Vector__XXX\n", m, s, s*8)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// TestRegistryRefusesAFIFOAtOnce: a named pipe in the data directory is
// refused without waiting for a writer (opening it blocking would hang
// the call, and 16 such calls every concurrency slot).
func TestRegistryRefusesAFIFOAtOnce(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.dbc"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := os.Symlink("pipe.dbc", filepath.Join(dir, "link.dbc")); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(dir)
	for _, file := range []string{"pipe.dbc", "link.dbc"} {
		t.Run(file, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := r.Load(context.Background(), "", file); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "FIFO") {
					t.Errorf("err = %v, want ErrNotRegular naming a FIFO", err)
				}
			case <-time.After(giveUp):
				t.Fatal("loading a FIFO hung")
			}
		})
	}
}

// TestRegistryChecksBeforeParsing: a full registry and an oversize file
// are refused before a byte is parsed (a parse would allocate many times
// the file's size).
func TestRegistryChecksBeforeParsing(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile(filepath.Join("testdata", "handmade.dbc"))
	os.WriteFile(filepath.Join(dir, "a.dbc"), good, 0o644)
	huge := filepath.Join(dir, "huge.dbc")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(dir)
	if _, err := r.Load(context.Background(), "big", "huge.dbc"); !errors.Is(err, errFileTooLarge) {
		t.Errorf("oversize file: %v, want errFileTooLarge", err)
	}
	for i := range MaxDatabases {
		if _, err := r.Load(context.Background(), fmt.Sprint("db", i), "a.dbc"); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := r.Load(context.Background(), "one-more", "a.dbc"); !errors.Is(err, ErrTooMany) {
			t.Errorf("full registry: %v, want ErrTooMany", err)
		}
	})
	if allocs > 20 { // a parse of handmade.dbc makes thousands
		t.Errorf("a refused load made %.0f allocations: it read or parsed the file", allocs)
	}
}

// TestRegistryLoadsOneAtATime runs 16 loads of a 3 MB database at once,
// as the attack did: the heap in use never holds more than one parse's
// worth beyond the databases kept, and the loads past the registry's
// bounds are refused by name.
func TestRegistryLoadsOneAtATime(t *testing.T) {
	if testing.Short() {
		t.Skip("parses 3 MB sixteen times")
	}
	dir := t.TempDir()
	text := bigDBC(8100, 5)
	if err := os.WriteFile(filepath.Join(dir, "big.dbc"), text, 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewRegistry(dir)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
	}()
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() { _, errs[i] = r.Load(context.Background(), fmt.Sprint("truck", i), "big.dbc") })
	}
	wg.Wait()
	close(stop)
	<-sampled
	loaded, refused := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			loaded++
		case errors.Is(err, ErrTooBig), errors.Is(err, ErrTooMany):
			refused++
		default:
			t.Errorf("load: %v", err)
		}
	}
	kept := r.List()
	var held int64
	for _, db := range kept {
		held += db.Bytes
	}
	t.Logf("%d loaded (%d MiB estimated), %d refused; heap peak %d MiB over the start", loaded, held>>20, refused, (int64(peak)-int64(base.HeapAlloc))>>20)
	if loaded == 0 || refused == 0 || loaded != len(kept) || held > MaxRegistryBytes {
		t.Errorf("%d loaded, %d refused, %d kept holding %d bytes: want some of each within %d", loaded, refused, len(kept), held, MaxRegistryBytes)
	}
	// One parse of this file allocates about 60 MB; sixteen at once
	// would be near a gigabyte. The collector lets the heap reach twice
	// what is live (GOGC=100), so the bound is twice the databases kept
	// plus one parse.
	const oneParse = 64 << 20
	if grew := int64(peak) - int64(base.HeapAlloc); grew > 2*(held+oneParse) {
		t.Errorf("heap grew %d MiB at its peak, holding %d MiB: more than one parse ran at a time", grew>>20, held>>20)
	}
}

// TestRegistryLoadWaitsOnlyAsLongAsItsContext: a load behind another
// returns its context's error instead of waiting on.
func TestRegistryLoadWaitsOnlyAsLongAsItsContext(t *testing.T) {
	r := NewRegistry(t.TempDir())
	r.loading <- struct{}{} // a load in progress
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Load(ctx, "", "a.dbc"); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the context's", err)
	}
}

// labelDBC is msgs one-signal messages whose signal has labels short
// value descriptions: the densest way to turn file bytes into heap.
func labelDBC(msgs, labels int) []byte {
	var b strings.Builder
	b.WriteString("BU_: ECU\n")
	for m := range msgs {
		fmt.Fprintf(&b, "BO_ %d M%d: 8 ECU\n SG_ S%d : 0|16@1+ (1,0) [0|65535] \"\" ECU\n", m, m, m)
	}
	for m := range msgs {
		fmt.Fprintf(&b, "VAL_ %d S%d", m, m)
		for v := range labels {
			fmt.Fprintf(&b, " %d \"\"", v)
		}
		b.WriteString(" ;\n")
	}
	return []byte(b.String())
}

// TestFootprintTracksTheHeap: the estimate a load is bounded by stays
// within a factor of two of the heap a parsed database really holds.
func TestFootprintTracksTheHeap(t *testing.T) {
	cases := []struct {
		name string
		text func(t *testing.T) []byte
	}{
		{name: "3 MB, 8100 messages", text: func(*testing.T) []byte { return bigDBC(8100, 5) }},
		{name: "wide messages", text: func(*testing.T) []byte { return bigDBC(200, 64) }},
		{name: "labels", text: func(*testing.T) []byte { return labelDBC(100, 300) }},
		{name: "handmade", text: func(t *testing.T) []byte {
			b, err := os.ReadFile(filepath.Join("testdata", "handmade.dbc"))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.text(t)
			// Enough copies that the allocator's fixed costs do not decide.
			copies := max(1, (4<<20)/len(text))
			copies = min(copies, 64)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			dbs := make([]*Database, copies)
			for i := range dbs {
				db, err := Parse("x.dbc", text)
				if err != nil {
					t.Fatal(err)
				}
				dbs[i] = db
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			real := float64(after.HeapAlloc-before.HeapAlloc) / float64(copies)
			est := float64(dbs[0].Bytes)
			runtime.KeepAlive(dbs)
			t.Logf("footprint %.0f bytes, heap %.0f bytes per database (%.2f×)", est, real, est/real)
			if est < real/2 || est > real*2 {
				t.Errorf("footprint %.0f bytes, heap %.0f bytes per database: off by more than a factor of two", est, real)
			}
		})
	}
}

// TestParseRefusesADatabaseOverItsMemoryBound: a file within every count
// and size bound whose parsed form (labels cost several times their
// text) is over MaxDatabaseBytes is refused, saying so.
func TestParseRefusesADatabaseOverItsMemoryBound(t *testing.T) {
	text := labelDBC(1000, 500)
	if len(text) > MaxFileBytes {
		t.Fatalf("test file is %d bytes, over MaxFileBytes: it would be refused for its size", len(text))
	}
	_, err := Parse("labels.dbc", text)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Reason, "MiB limit") {
		t.Fatalf("err = %v, want the memory bound named", err)
	}
}
