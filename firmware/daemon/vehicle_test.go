package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/board/sim"
	"fieldtap/board/sim/j1939gen"
	"fieldtap/drivers/capture"
	"fieldtap/firmware/config"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
	"fieldtap/services/rtp"
)

// The sim truck's workshop session reaches the live UDS store through
// feedCAN, numbered as the port's frame ring numbers its frames.
func TestFeedCANFillsUDSStore(t *testing.T) {
	an := feedSimTruck(t)
	st := an.uds.Status()
	if len(st.Ports) != 1 || st.Ports[0].UDS.Requests != j1939gen.WorkshopRequests {
		t.Fatalf("UDS store %+v", st)
	}
	snap := an.uds.Transactions()
	frames := an.can.Lookup("can0").Frames()
	snap.Range(snap.FirstSeq(), func(_ uint64, r isotp.Record) bool {
		if r.Request == nil {
			t.Errorf("unmatched %+v", r)
			return true
		}
		f, ok := frames.Get(r.Request.Seq)
		if !ok || !f.Time.Equal(r.Request.Time) {
			t.Errorf("transaction %d points at frame %d: %+v", r.ID, r.Request.Seq, f)
		}
		return true
	})
}

// feedSimTruck runs the sim truck's can0, its workshop session on, once
// through to its end into new analysers' can0 port, as the daemon feeds
// a port, failing on a frame its analysers cannot decode.
func feedSimTruck(t *testing.T) *analysers {
	t.Helper()
	an := testAnalysers(t, rtp.Options{}, testSource{name: "can0", kind: capture.KindCAN})
	consume, _, err := an.attach("can0", capture.KindCAN)
	if err != nil {
		t.Fatal(err)
	}
	var can0 capture.Source
	for _, s := range sim.Ports(sim.Options{Speed: 0, Seed: sim.DefaultSeed, Workshop: true, Now: func() time.Time { return time.Unix(1e9, 0) }}) {
		if s.Name() == "can0" {
			can0 = s
		}
	}
	var c capture.Counters
	h := capture.NewHandoff(1024, &c)
	go func() { can0.Run(context.Background(), h); h.Close() }()
	for {
		b, ok := h.Receive()
		if !ok {
			break
		}
		if bad := consume(b.Frames); bad != 0 {
			t.Fatalf("%d undecodable frames", bad)
		}
		h.Release(b)
	}
	return an
}

// dbc_load of a J1939 DBC extends the SPN catalogue the J1939 store uses.
func TestDBCLoadExtendsSPNCatalogue(t *testing.T) {
	data := t.TempDir()
	const oem = "BO_ 2565866545 Oem: 8 N\n SG_ Boost : 8|16@1+ (0.25,-50) [0|16000] \"kPa\" N\n" +
		"BA_DEF_ SG_ \"SPN\" INT 0 524287;\nBA_ \"SPN\" SG_ 2565866545 Boost 9999;\n"
	if err := os.WriteFile(filepath.Join(data, "oem.dbc"), []byte(oem), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Board, cfg.Store.ExportDir, cfg.Store.DataDir = config.BoardNone, t.TempDir(), data
	_, an := analysersOf(t, cfg, rtp.Options{})
	if _, ok := an.j1939.Catalogue().Lookup(9999); ok {
		t.Fatal("SPN 9999 known before the file was loaded")
	}
	if _, err := an.dbc.Load(context.Background(), "", "oem.dbc"); err != nil {
		t.Fatal(err)
	}
	p, ok := an.j1939.Catalogue().Lookup(9999)
	if !ok || p.Source != "dbc:oem" || p.PGN != j1939.PGNEEC1 {
		t.Errorf("SPN 9999 after the load: %+v %v", p, ok)
	}
}

// dbc.preload loads its files at start-up under their names, a file read
// with a deviation logged; a file that does not load is an error naming
// it and the data directory.
func TestDBCPreload(t *testing.T) {
	data := t.TempDir()
	const loose = "BO_ 1 M: 8 N\n SG_ S : 0|8@1+ (1,0) [0|255] \"\" N\nVAL_ 1 S 0 \"off\"\n"
	if err := os.WriteFile(filepath.Join(data, "loose.dbc"), []byte(loose), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "prose.dbc"), []byte("not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Board, cfg.Store.ExportDir, cfg.Store.DataDir = config.BoardNone, t.TempDir(), data
	_, an := analysersOf(t, cfg, rtp.Options{})
	var log bytes.Buffer
	if err := an.preloadDBC(context.Background(), []string{"loose.dbc"}, slog.New(slog.NewTextHandler(&log, nil))); err != nil {
		t.Fatal(err)
	}
	if db, err := an.dbc.Get("loose"); err != nil || len(db.Warnings) != 1 {
		t.Fatalf("loose: %v %v", db, err)
	}
	if !strings.Contains(log.String(), "line 3: VAL_ statement does not end with ';'") {
		t.Errorf("log %s", log.String())
	}
	for file, want := range map[string]string{
		"prose.dbc":   "dbc.preload prose.dbc (in " + data + "): prose.dbc:1: defines no message",
		"missing.dbc": "dbc.preload missing.dbc (in " + data + "): ",
	} {
		err := an.preloadDBC(context.Background(), []string{file}, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want …%s", file, err, want)
		}
	}
}
