package metrics

import (
	"compress/gzip"
	"io"
	"math"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/procfs"
)

// TestExpositionEscapes writes label values and HELP text that need
// escaping and reads them back with Prometheus's own text parser.
func TestExpositionEscapes(t *testing.T) {
	odd := "a\\b\"c\nd"
	e := newExposition()
	d := &metricDesc{name: "x_total", help: "help with \\ and\na newline", labels: []string{"port", "cause"}}
	e.add(d, typeCounter, 3, odd, "z")
	e.add(d, typeCounter, 1, "a", "y")
	e.addPairs("y", "a gauge", typeGauge, "", math.Inf(1))
	var b strings.Builder
	if err := e.write(&b); err != nil {
		t.Fatal(err)
	}
	want := "# HELP x_total help with \\\\ and\\na newline\n# TYPE x_total counter\n" +
		`x_total{cause="y",port="a"} 1` + "\n" + `x_total{cause="z",port="a\\b\"c\nd"} 3` + "\n" +
		"# HELP y a gauge\n# TYPE y gauge\ny +Inf\n"
	if b.String() != want {
		t.Fatalf("exposition:\n%s\nwant:\n%s", b.String(), want)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	f := fams["x_total"]
	if f.GetHelp() != "help with \\ and\na newline" {
		t.Errorf("HELP read back %q", f.GetHelp())
	}
	got := f.GetMetric()[1]
	if v := got.GetLabel()[1].GetValue(); v != odd || got.GetCounter().GetValue() != 3 {
		t.Errorf("label read back %q = %v, want %q = 3", v, got.GetCounter().GetValue(), odd)
	}
}

// TestProcessSeriesAgainstProcfs reads this process with the procfs
// library the client's process collector used: the start time and the
// limits must agree exactly, the open descriptors within the two the
// readers themselves hold.
func TestProcessSeriesAgainstProcfs(t *testing.T) {
	p, err := procfs.Self()
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	e := newExposition()
	processSeries(e)
	val := func(name string) float64 {
		t.Helper()
		f := e.fams[name]
		if f == nil || len(f.samples) != 1 {
			t.Fatalf("%s missing", name)
		}
		return f.samples[0].value
	}
	st, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	start, err := st.StartTime()
	if err != nil {
		t.Fatal(err)
	}
	lim, err := p.Limits()
	if err != nil {
		t.Fatal(err)
	}
	fds, err := p.FileDescriptorsLen()
	if err != nil {
		t.Fatal(err)
	}
	if got := val("process_start_time_seconds"); got != start {
		t.Errorf("start time %v, procfs %v", got, start)
	}
	if got := val("process_max_fds"); got != float64(lim.OpenFiles) {
		t.Errorf("max fds %v, procfs %v", got, lim.OpenFiles)
	}
	if got := val("process_virtual_memory_max_bytes"); got != float64(lim.AddressSpace) {
		t.Errorf("address space %v, procfs %v", got, lim.AddressSpace)
	}
	if got := val("process_open_fds"); math.Abs(got-float64(fds)) > 2 {
		t.Errorf("open fds %v, procfs %d", got, fds)
	}
	if val("process_resident_memory_bytes") <= 0 || val("process_virtual_memory_bytes") <= 0 {
		t.Errorf("memory series zero")
	}
	for _, n := range []string{"process_cpu_seconds_total", "process_network_receive_bytes_total", "process_network_transmit_bytes_total"} {
		val(n)
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name, in string
		want     procStat
		err      string
	}{
		{name: "command with spaces and parentheses",
			in:   "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 8 0 12345 1000000 250 18446744073709551615",
			want: procStat{cpuTicks: 200, startTicks: 12345, vsize: 1000000, rssPages: 250}},
		{name: "no command", in: "42 a S 1", err: "no ')'"},
		{name: "short", in: "42 (a) S 1 2 3", err: "want at least 22"},
		{name: "not a number", in: "42 (a) S 1 42 42 0 -1 4194560 100 0 0 0 x 50 0 0 20 0 8 0 12345 1000000 250", err: "field 14"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseStat = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "deflate, gzip;q=1.0, *;q=0.5": true, "gzip;q=0": false, "gzip; q=0.000": false,
		"br": false, "identity, gzip ;q=0.1": true,
	} {
		if got := acceptsGzip(h); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}

// TestGzipOnlyWhenAsked: a scraper that asks for gzip gets it, one that
// does not gets plain text.
func TestGzipOnlyWhenAsked(t *testing.T) {
	h := Handler(Sources{})
	for _, enc := range []string{"gzip", ""} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Accept-Encoding", enc)
		h.ServeHTTP(rec, req)
		body := io.Reader(rec.Body)
		if rec.Header().Get("Content-Encoding") == "gzip" {
			if enc == "" {
				t.Fatal("gzip sent to a scraper that did not ask for it")
			}
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = zr
		} else if enc == "gzip" {
			t.Fatal("plain text to a scraper that asked for gzip")
		}
		b, err := io.ReadAll(body)
		if err != nil || !strings.Contains(string(b), "\ngo_goroutines ") || rec.Header().Get("Content-Type") != contentType {
			t.Errorf("Accept-Encoding %q: %v, Content-Type %q, body:\n%.300s", enc, err, rec.Header().Get("Content-Type"), b)
		}
	}
}

// procSeeds are this machine's own /proc files, when there are any.
func procSeeds(f *testing.F, path string, lit ...string) {
	for _, s := range lit {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile(path); err == nil {
		f.Add(b)
	}
}

func FuzzParseStat(f *testing.F) {
	procSeeds(f, "/proc/self/stat", "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 8 0 12345 1000000 250 1")
	f.Fuzz(func(t *testing.T, b []byte) { parseStat(b) })
}

func FuzzParseLimit(f *testing.F) {
	procSeeds(f, "/proc/self/limits", "Max open files            1024                 4096                 files\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		parseLimit(b, "Max open files")
		parseLimit(b, "Max address space")
	})
}

func FuzzParseNetDev(f *testing.F) {
	procSeeds(f, "/proc/self/net/dev", "    lo: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n")
	f.Fuzz(func(t *testing.T, b []byte) { parseNetDev(b) })
}

func FuzzParseBootTime(f *testing.F) {
	procSeeds(f, "/proc/stat", "cpu 1 2 3\nbtime 1700000000\n")
	f.Fuzz(func(t *testing.T, b []byte) { parseBootTime(b) })
}
