package metrics

import (
	"flag"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/exposition.golden from the endpoint")

// TestExpositionGolden compares the whole endpoint with
// testdata/exposition.golden, first written from the prometheus client
// library's output on the same sources: every HELP and TYPE line, every
// series name and label set, and the value of every fieldtap_ series.
// The go_ and process_ values change from run to run, so only their
// series are compared.
func TestExpositionGolden(t *testing.T) {
	srv := httptest.NewServer(Handler(sources(t)))
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); ct != contentType {
		t.Errorf("Content-Type %q", ct)
	}
	got := seriesOf(string(body))
	path := filepath.Join("testdata", "exposition.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("line %d:\n got %q\nwant %q", i+1, g, w)
			}
		}
	}
}

// seriesOf is the exposition with the values of the go_ and process_
// series cut off.
func seriesOf(exp string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(exp, "\n"), "\n") {
		if !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "fieldtap_") {
			l = l[:strings.LastIndexByte(l, ' ')]
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}
