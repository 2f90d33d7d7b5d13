package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var printSizes = flag.Bool("print-bundle-sizes", false, "log each bundle's tools/list bytes (to update docs/mcp-tools.md)")

// bundleBytes is the compact JSON of tools/list with only bundle loaded:
// what a client pays in context for loading it.
func bundleBytes(t *testing.T, bundle string) int {
	t.Helper()
	s, err := NewServer(testDeps(), Options{Bundles: []string{bundle}})
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(rpc(t, s, "tools/list", map[string]any{}), &res); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, res.Tools); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

// docBundleRow matches a row of the bundle table in docs/mcp-tools.md:
// | bundle | loaded by default | tools/list bytes (ceiling) | tools |
var docBundleRow = regexp.MustCompile(`^\| ([a-z0-9]+) \| (yes|no) \| ([0-9]+) \|`)

func docBundleCeilings(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "mcp-tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := docBundleRow.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[3])
			out[m[1]] = n
		}
	}
	return out
}

// TestEachBundleStaysWithinItsByteCeiling pins tools/list bytes per
// bundle to the table in docs/mcp-tools.md: a bundle that grows past its
// ceiling fails until the table moves in the same change.
func TestEachBundleStaysWithinItsByteCeiling(t *testing.T) {
	ceilings := docBundleCeilings(t)
	var sizes []string
	for _, name := range BundleNames(testDeps()) {
		got := bundleBytes(t, name)
		sizes = append(sizes, name+"="+strconv.Itoa(got))
		ceiling, listed := ceilings[name]
		switch {
		case !listed:
			t.Errorf("bundle %s (%d bytes) has no row in the docs/mcp-tools.md bundle table", name, got)
		case got > ceiling:
			t.Errorf("bundle %s: tools/list is %d bytes, over its recorded ceiling %d: trim descriptions or raise the ceiling in docs/mcp-tools.md", name, got, ceiling)
		}
	}
	if *printSizes {
		t.Log(strings.Join(sizes, " "))
	}
}
