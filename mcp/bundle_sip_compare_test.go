package mcp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/framestore"
	"fieldtap/services/netdecode"
	"fieldtap/services/ports"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// siteDeps feeds each capture as its own Ethernet port, as the daemon
// runs an opened capture: its frames in the port's ring, its SIP and RTP
// in the one shared analysis.
func siteDeps(t *testing.T, files map[string]string) Deps {
	t.Helper()
	st, _ := sip.New(sip.Limits{})
	an := sip.NewAnalyser(st, netdecode.Options{})
	media := rtp.NewAnalyser(rtp.Options{})
	an.SetMediaHook(media)
	ex := sip.NewExporter(t.TempDir(), netdecode.Options{})
	var ps fakePorts
	for _, name := range []string{"file1", "file2"} {
		path, ok := files[name]
		if !ok {
			continue
		}
		fs, err := framestore.New(framestore.Limits{Items: 100_000, Bytes: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		ex.AddPort(name, fs)
		n := uint64(0)
		refdata.EachRecord(t, path, func(rec pcapfile.Record) {
			if _, err := fs.Append(framestore.Record{Time: rec.Time, Link: rec.Link, Data: rec.Data, OrigLen: len(rec.Data)}); err != nil {
				t.Fatal(err)
			}
			an.Feed(rec.Time, rec.Link, rec.Data)
			n++
		})
		ps = append(ps, ports.Status{Name: name, Kind: portKindEthernet, Source: "file:" + filepath.Base(path), Frames: n, SourceExhausted: true})
	}
	d := withPorts(testDeps(), ps)
	d.SIP, d.Media, d.MediaInterval, d.SIPExport = st, media, rtp.DefaultInterval, ex
	d.SIPStats = an.Stats
	return d
}

// compareRows is every row of one compare_captures answer, by metric and
// key (or fenced text), following the cursor.
func compareRows(h *harness, args map[string]any) map[string]map[string]any {
	h.t.Helper()
	out := map[string]map[string]any{}
	args["limit"] = 7 // several pages: the cursor keeps the order
	for last := 0; ; {
		env := h.ok("compare_captures", args)
		for _, r := range items(env) {
			k, _ := r["key"].(string)
			if txt, _ := r["text"].(string); txt != "" {
				k = txt
			}
			out[r["metric"].(string)+"/"+k] = r
			if rank, ok := r["rank"].(float64); ok {
				if int(rank) <= last {
					h.t.Errorf("rank %v after %d: %v", rank, last, r)
				}
				last = int(rank)
			}
		}
		next, _ := pageOf(env)["next_cursor"].(string)
		if next == "" {
			return out
		}
		args["cursor"] = next
	}
}

// sipLine is one SIP message as tshark decoded it.
type sipLine struct {
	rel                 float64 // frame.time_relative
	method, code, cseqM string
}

// tsharkSIPLines reads every SIP message of path with tshark, once: the
// windows' counts are taken from its fields.
func tsharkSIPLines(t *testing.T, path string) []sipLine {
	t.Helper()
	out, err := exec.Command("tshark", "-r", path, "-Y", "sip", "-T", "fields", "-E", "separator=|",
		"-e", "frame.time_relative", "-e", "sip.Method", "-e", "sip.Status-Code", "-e", "sip.CSeq.method").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var ls []sipLine
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, "|")
		rel, err := strconv.ParseFloat(f[0], 64)
		if err != nil || len(f) != 4 {
			t.Fatalf("tshark line %q", l)
		}
		ls = append(ls, sipLine{rel: rel, method: f[1], code: f[2], cseqM: f[3]})
	}
	return ls
}

func rowNum(t *testing.T, r map[string]any, key string) float64 {
	t.Helper()
	v, ok := r[key].(float64)
	if !ok {
		t.Fatalf("%s is %v in %v", key, r[key], r)
	}
	return v
}

// TestCompareCapturesWindows: two windows of branch-scenario-sipp.pcapng
// (the first 60 s and the rest), each of whose 1334 Call-IDs is a
// REGISTER then one INVITE within a few ms, checked against tshark on the
// same windows: INVITEs, 403s and 200s to INVITE, and the ASR they make.
func TestCompareCapturesWindows(t *testing.T) {
	path := filepath.Join(refdata.Dir(t, "sip"), "branch-scenario-sipp.pcapng")
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: the windows' ground truth needs it")
	}
	const split = 60 // seconds into the capture
	var first time.Time
	refdata.EachRecord(t, path, func(rec pcapfile.Record) {
		if first.IsZero() {
			first = rec.Time
		}
	})
	at := first.Add(split * time.Second).UTC().Format(time.RFC3339Nano)
	h := newHarness(t, siteDeps(t, map[string]string{"file1": path}))
	rows := compareRows(h, map[string]any{"until_a": at, "since_b": at})

	lines := tsharkSIPLines(t, path)
	for _, w := range []struct {
		side, count string
		in          func(rel float64) bool
	}{{"before", "count_before", func(rel float64) bool { return rel < split }}, {"after", "count_after", func(rel float64) bool { return rel >= split }}} {
		// As tshark -Y 'frame.time_relative < 60 && sip.Method == "INVITE"' and so on.
		var invites, forbidden, answered, registers int
		for _, l := range lines {
			switch {
			case !w.in(l.rel):
			case l.method == "INVITE":
				invites++
			case l.method == "REGISTER":
				registers++
			case l.code == "403" && l.cseqM == "INVITE":
				forbidden++
			case l.code == "200" && l.cseqM == "INVITE":
				answered++
			}
		}
		if got := rowNum(t, rows["dialogs/"], w.side); int(got) != registers {
			t.Errorf("%s: %v dialogs, tshark %d REGISTERs (one per Call-ID)", w.side, got, registers)
		}
		if got := rowNum(t, rows["method/INVITE"], w.count); int(got) != invites {
			t.Errorf("%s: %v dialogs with an INVITE, tshark %d", w.side, got, invites)
		}
		if got := rowNum(t, rows["final_code/403"], w.count); int(got) != forbidden {
			t.Errorf("%s: %v dialogs ended 403, tshark %d", w.side, got, forbidden)
		}
		asr := rows["asr/"]
		if pop := rowNum(t, asr, "population_"+w.side); int(pop) != forbidden+answered {
			t.Errorf("%s: ASR over %v attempts, tshark %d final responses to INVITE", w.side, pop, forbidden+answered)
		} else if got, want := rowNum(t, asr, w.side), float64(answered)/float64(forbidden+answered); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: ASR %v, tshark %d/%d", w.side, got, answered, forbidden+answered)
		}
	}
	// 601 then 733 INVITEs, 102 answered then none: the ASR fell to 0
	// (movement 1) and ranks above the dialog count's 18 % rise.
	if asr := rows["asr/"]; asr["change_pct"] != -100.0 || asr["rank"] == nil || asr["note"] != nil {
		t.Errorf("asr %v: want ranked, -100 %%", asr)
	}
	if rowNum(t, rows["asr/"], "rank") > rowNum(t, rows["dialogs/"], "rank") {
		t.Errorf("asr ranks %v, dialogs %v: the larger movement first", rows["asr/"]["rank"], rows["dialogs/"]["rank"])
	}
	if pdd := rows["pdd_p50/"]; pdd["unit"] != "ms" || pdd["population_before"] == 0.0 {
		t.Errorf("pdd_p50 %v", pdd)
	}
}

// TestCompareCapturesOpenedCaptures: two captures opened as file1 and
// file2, told apart by the Call-IDs each port's frames carried.
// SIP_CALL_RTP_G711.pcap has 4 Call-IDs (2 REGISTER, 2 INVITE: one
// answered, one left ringing) and the RTP of the answered call;
// sip-488-Not-Acceptable-Here-codec-null.pcapng has 4 (3 OPTIONS, one
// INVITE challenged 401 and refused 488) and no RTP (tshark 4.0.17,
// sip.Call-ID by method, code, User-Agent and Server). One attempt a side is under the
// default guard: its ASR is reported, not ranked, until min_population 1.
func TestCompareCapturesOpenedCaptures(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	d := siteDeps(t, map[string]string{"file1": filepath.Join(dir, "SIP_CALL_RTP_G711.pcap"), "file2": filepath.Join(dir, "sip-488-Not-Acceptable-Here-codec-null.pcapng")})
	h := newHarness(t, d)
	rows := compareRows(h, map[string]any{"port": "file1", "port_b": "file2"})
	for _, c := range []struct {
		row           string
		before, after float64
	}{
		{"dialogs/", 4, 4},
		{"method/INVITE", 2, 1},
		{"method/REGISTER", 2, 0},
		{"method/OPTIONS", 0, 3},
		{"final_code/488", 0, 1},
	} {
		r := rows[c.row]
		count := "before"
		if r != nil && r["unit"] == "share" {
			count = "count_before"
		}
		if r == nil || rowNum(t, r, count) != c.before || rowNum(t, r, strings.Replace(count, "before", "after", 1)) != c.after {
			t.Errorf("%s: %v, want %v → %v", c.row, r, c.before, c.after)
		}
	}
	asr := rows["asr/"]
	if asr["before"] != 1.0 || asr["after"] != 0.0 || asr["rank"] != nil || !strings.HasPrefix(fmt.Sprint(asr["note"]), "too few: 1 attempts before, 1 after") {
		t.Errorf("asr %v: want 1 → 0 reported as too few", asr)
	}
	// tshark finds 3 RTP streams in file1; the third (6 packets) is an
	// MGCP call's, which no SIP dialog of the port ties to it.
	if streams := rows["rtp_streams/"]; streams["before"] != 2.0 || streams["after"] != 0.0 {
		t.Errorf("rtp_streams %v: want the answered call's 2 before, none after", streams)
	}
	if w := fmt.Sprint(h.ok("compare_captures", map[string]any{"port": "file1", "port_b": "file2"})["warnings"]); !strings.Contains(w, "side a: 1 streams of the window are left out") {
		t.Errorf("warnings %s: want the MGCP stream said", w)
	}
	if vs := rows["mos_band/very satisfied"]; vs["count_before"] != 2.0 || vs["note"] != "after: no streams" {
		t.Errorf("mos_band very satisfied %v: both G.711 streams score 4.4", vs)
	}
	// X-Lite is the REGISTER's User-Agent and both INVITEs' Server.
	if ua := rows["user_agent/"+fenced("X-Lite release 1103m")]; ua == nil || ua["count_before"] != 3.0 || ua["count_after"] != 0.0 {
		t.Errorf("X-Lite's User-Agent, fenced: %v", ua)
	}

	rows = compareRows(h, map[string]any{"port": "file1", "port_b": "file2", "min_population": 1})
	if asr := rows["asr/"]; asr["rank"] == nil || asr["note"] != nil || asr["movement"] != 1.0 {
		t.Errorf("asr with min_population 1: %v, want ranked with movement 1", asr)
	}

	if w := fmt.Sprint(h.ok("compare_captures", map[string]any{"port": "file2", "port_b": "file2"})["warnings"]); !strings.Contains(w, "both sides are the same dialogs") {
		t.Errorf("a side compared with itself: warnings %s", w)
	}
	h.fails("compare_captures", map[string]any{"port": "file1", "port_b": "file9"}, CodeInvalidArgument)
	h.fails("compare_captures", map[string]any{"since_b": "2020-01-02T00:00:00Z", "until_b": "2020-01-01T00:00:00Z"}, CodeInvalidArgument)
}

// TestCompareCapturesPopulationGuard: a window of one call (the first 50
// ms of branch-scenario-sipp.pcapng hold Call-ID 1-4461 alone, refused
// 403, tshark 4.0.17) against the first minute (102 answered of 588
// attempts) moves the ASR by 100 %, yet with the default guard nothing
// ranks: every row's population on side A is one dialog. Lowered to 1,
// the ASR ranks.
func TestCompareCapturesPopulationGuard(t *testing.T) {
	path := filepath.Join(refdata.Dir(t, "sip"), "branch-scenario-sipp.pcapng")
	var first time.Time
	refdata.EachRecord(t, path, func(rec pcapfile.Record) {
		if first.IsZero() {
			first = rec.Time
		}
	})
	at := func(d time.Duration) string { return first.Add(d).UTC().Format(time.RFC3339Nano) }
	h := newHarness(t, siteDeps(t, map[string]string{"file1": path}))
	args := map[string]any{"until_a": at(50 * time.Millisecond), "until_b": at(time.Minute)}
	rows := compareRows(h, args)
	for k, r := range rows {
		if r["rank"] != nil {
			t.Errorf("%s ranked over a one-call window: %v", k, r)
		}
	}
	if asr := rows["asr/"]; asr["before"] != 0.0 || asr["movement"] != 1.0 || asr["note"] != "too few: 1 attempts before, 588 after (min_population 20)" {
		t.Errorf("asr %v: want 0 vs 102/588, too few", asr)
	}
	delete(args, "cursor")
	args["min_population"] = 1
	if asr := compareRows(h, args)["asr/"]; asr["rank"] == nil {
		t.Errorf("asr with min_population 1: %v, want ranked", asr)
	}
}

// isRun is whether the kept lie together.
func isRun(in []bool) bool {
	first, last := slices.Index(in, true), -1
	for i, k := range in {
		if k {
			last = i
		}
	}
	return first < 0 || !slices.Contains(in[first:last+1], false)
}

// TestDialogsInKeepsTheChosen: a side's dialogs are those the window
// keeps, in order, whether they lie together (then a part of the list
// itself, from lo) or apart, and none when it keeps none.
func TestDialogsInKeepsTheChosen(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	for round := range 300 {
		ds := make([]*sip.Dialog, rng.IntN(60))
		for i := range ds {
			ds[i] = &sip.Dialog{ID: uint64(i)}
		}
		in := make([]bool, len(ds))
		if round%2 == 0 && len(ds) > 0 { // one run
			lo := rng.IntN(len(ds))
			for i := lo; i < lo+rng.IntN(len(ds)-lo+1); i++ {
				in[i] = true
			}
		} else {
			for i := range in {
				in[i] = rng.IntN(3) == 0
			}
		}
		var want []*sip.Dialog
		for i, d := range ds {
			if in[i] {
				want = append(want, d)
			}
		}
		got, lo, together := dialogsIn(ds, func(d *sip.Dialog) bool { return in[d.ID] })
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: kept %d dialogs, want %d", round, len(got), len(want))
		}
		// together names where in ds they lie: a side's counts are then
		// read from the snapshot's columns of those rows.
		if together && len(got) > 0 && &ds[lo] != &got[0] || !together && len(got) > 0 && isRun(in) {
			t.Fatalf("round %d: together %v from %d, for a part %v of the list", round, together, lo, isRun(in))
		}
		if cap(got) != len(got) {
			t.Fatalf("round %d: %d kept with room for %d: an append would write into the snapshot's list", round, len(got), cap(got))
		}
	}
}
