package main

// Golden transcripts: every read-only tool answered through the real
// binary on the seeded simulated board and on reference captures, one
// file per tool under testdata/golden/<scenario>/. Any change to an
// answer's keys or values fails with the diff; `go test -run
// TestGoldenTranscripts -update` rewrites them, so a change that was
// meant shows in review as a diff of these files.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"fieldtap/tools/refdata"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts under testdata/golden")

// goldenBundles is every bundle: a tool in an opt-in bundle is as much
// the box's contract as one loaded by default.
const goldenBundles = "server,can,j1939,sip,media,j1708,transmit,blackbox,uds,dbc,j1939_diag,canre,j1587_ref,sip_forensics,sip_site,bus_await"

// goldenSimStart fixes the sim board's clock, so its traffic is the
// same byte for byte on every run.
const goldenSimStart = "2026-01-05T09:00:00Z"

// goldenExtra are arguments beyond the required ones: a wait on a
// capture that has ended is cut to its shortest.
var goldenExtra = map[string]map[string]any{
	"await_bus":       {"timeout_seconds": 1},
	"await_condition": {"timeout_seconds": 1},
}

// goldenScenario is one capture the transcripts are taken on.
type goldenScenario struct {
	name string
	// ref is a reference capture under ../shared/testdata; empty for
	// the simulated board.
	ref   string
	fixed map[string]any // values for required arguments
}

// goldenFixed are the required arguments every scenario shares: the DBC
// each loads and its message, a SIP rule, a search window.
var goldenFixed = map[string]any{
	"file": "eec1.dbc", "message": "EEC1", "values": map[string]any{"EngineSpeed": 1200}, "id": simEEC1,
	"pgn": 61444, "spn": 190, "tool": "capture_status", "query": "sip:", "filter": "", "index": 0, "rule": "missing_ack",
	"since": "2000-01-01T00:00:00Z", "until": "2100-01-01T00:00:00Z",
}

// with is goldenFixed with a scenario's own values.
func with(own map[string]any) map[string]any {
	m := maps.Clone(goldenFixed)
	maps.Copy(m, own)
	return m
}

var goldenScenarios = []goldenScenario{
	{name: "sim", fixed: with(map[string]any{"mid": 128, "pid": 190})},
	// Reference captures whose licence lets their answers be kept in the
	// repository (../shared/testdata/*/PROVENANCE.md): one generated here
	// with SIPp, one MIT-licensed truck log.
	{name: "ref-sip-hold-resume", ref: "sip/gen-sipp-hold-resume-rfc2833-udp.pcapng", fixed: goldenFixed},
	{name: "ref-j1939-css", ref: "can/css_j1939_FCBF0606.log", fixed: goldenFixed},
}

func TestGoldenTranscripts(t *testing.T) {
	for _, sc := range goldenScenarios {
		t.Run(sc.name, func(t *testing.T) {
			// Every scenario has the sim engine's DBC in its data
			// directory, loaded before the first call.
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "eec1.dbc"), []byte(eec1DBC))
			// Exports and captures in the run's own directories, and the
			// configuration (which names them) outside the data
			// directory, so list_files sees only the same files each run.
			cfg := writeFile(t, filepath.Join(t.TempDir(), "fieldtapd.toml"), []byte(fmt.Sprintf("[store]\ndata_dir = %q\nexport_dir = %q\ncapture_dir = %q\n",
				dir, filepath.Join(dir, "exports"), filepath.Join(dir, "captures"))))
			args := []string{"--config", cfg, "--board", "sim", "--replay-speed", "max", "--sim-start", goldenSimStart}
			if sc.ref != "" {
				args = []string{"--config", cfg, "--board", "none", "--source", refdata.File(t, strings.Split(sc.ref, "/")...)}
			}
			cc := startContract(t, append(args, "--mcp-bundles", goldenBundles)...)
			cc.waitExhausted()
			if env, _ := cc.call("dbc_load", map[string]any{"file": "eec1.dbc"}); env["ok"] != true {
				t.Fatalf("dbc_load: %v", env["errors"])
			}
			golden := filepath.Join("testdata", "golden", sc.name)
			written := map[string]bool{}
			for _, name := range cc.readOnlyTools() {
				in, ok := cc.requiredArgs(name, sc.fixed)
				if !ok {
					t.Logf("%s: no value for a required argument on this capture", name)
					continue
				}
				for k, v := range goldenExtra[name] {
					in[k] = v
				}
				env, blocks := cc.call(name, in)
				cc.learn(env)
				for i := range blocks { // the data's folder is wherever the tree was checked out
					blocks[i] = strings.ReplaceAll(blocks[i], refdata.Path(t), "<testdata>")
				}
				file := name + ".golden"
				written[file] = true
				checkGolden(t, filepath.Join(golden, file), transcript(name, in, blocks))
			}
			checkNoStaleGolden(t, golden, written)
		})
	}
}

// transcript is one call as the golden file keeps it: the request's
// arguments, then each content block, JSON indented with sorted keys and
// its volatile values replaced.
func transcript(tool string, args map[string]any, blocks []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "-- call %s --\n%s\n", tool, encodeIndented(args))
	run := ""
	for i, block := range blocks {
		fmt.Fprintf(&b, "-- content[%d] --\n", i)
		var v any
		d := json.NewDecoder(strings.NewReader(block))
		d.UseNumber()
		if d.Decode(&v) != nil {
			b.WriteString(block + "\n")
			continue
		}
		if run == "" {
			run = captureIdentity(v)
		}
		b.Write(encodeIndented(normaliseValue(v, run)))
		b.WriteString("\n")
	}
	return b.Bytes()
}

// encodeIndented encodes v with sorted keys (encoding/json sorts map
// keys), two-space indents, and <, >, & left as they are.
func encodeIndented(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(v); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// captureIdentity is the run's identity an envelope names: it differs
// between two runs of the same capture, and cursors carry it.
func captureIdentity(v any) string {
	env, _ := v.(map[string]any)
	src, _ := env["source"].(map[string]any)
	id, _ := src["capture_identity"].(string)
	return id
}

// volatileKeys hold values that differ between two runs of the same
// capture: how long a wait took and when a port entered its state, by
// the box's clock (capture_status's state_since, the coverage block's
// ports' since), a file's modification time (list_files; also
// server_capabilities' build flag of the same name, which a dirty tree
// sets), and where and when the run's DBC file was written and loaded
// (dbc_files' data_dir, modified_at, loaded_at).
var volatileKeys = map[string]bool{"waited_ms": true, "state_since": true, "modified": true, "data_dir": true, "modified_at": true, "loaded_at": true}

// normaliseValue replaces the run's identity with <run>, a cursor with
// its decoded text (which names the run), and volatile values with
// <volatile>; a schema property of the same name (an object) is kept.
func normaliseValue(v any, run string) any {
	switch x := v.(type) {
	case map[string]any:
		_, isCoveragePort := x["restarts"]
		for k, e := range x {
			_, isObject := e.(map[string]any)
			switch {
			case (volatileKeys[k] || (isCoveragePort && k == "since")) && !isObject && e != nil:
				x[k] = "<volatile>"
			case strings.HasSuffix(k, "cursor"):
				x[k] = decodeCursor(e, run)
			default:
				x[k] = normaliseValue(e, run)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = normaliseValue(e, run)
		}
	case string:
		if run != "" {
			x = strings.ReplaceAll(x, run, "<run>")
		}
		if strings.HasPrefix(x, "{") {
			// An answer carried as text (a resource's contents): its
			// volatile times are replaced where they stand.
			x = volatileInText.ReplaceAllString(x, `"$1":"<volatile>"`)
		}
		return x
	}
	return v
}

// volatileInText finds the volatile times inside JSON carried as text.
var volatileInText = regexp.MustCompile(`"(state_since|since)":"[^"]*"`)

// decodeCursor shows an opaque cursor as the text it encodes, with the
// run's identity replaced, so two runs write the same transcript and a
// reviewer can read where a page ends.
func decodeCursor(v any, run string) any {
	s, isString := v.(string)
	if !isString || s == "" {
		return v
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return v
	}
	return "cursor:" + strings.ReplaceAll(string(raw), run, "<run>")
}

// checkGolden compares got with the golden file, or rewrites it under
// -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v (run with -update to write it)", path, err)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the answer (-update rewrites it):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// checkNoStaleGolden fails on a golden file no tool wrote: a tool was
// renamed or removed, and its transcript must go with it.
func checkNoStaleGolden(t *testing.T, dir string, written map[string]bool) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if written[e.Name()] {
			continue
		}
		if *update {
			os.Remove(filepath.Join(dir, e.Name()))
			continue
		}
		t.Errorf("%s: no tool answered for this golden file (renamed or removed? -update deletes it)", filepath.Join(dir, e.Name()))
	}
}

// lineDiff is a small unified-style diff of two texts: the changed run
// of lines between their common prefix and suffix, with context.
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	const context = 3
	var out strings.Builder
	fmt.Fprintf(&out, "@@ line %d @@\n", pre+1)
	for _, l := range a[max(0, pre-context):pre] {
		out.WriteString("  " + l + "\n")
	}
	for _, l := range a[pre : len(a)-suf] {
		out.WriteString("- " + l + "\n")
	}
	for _, l := range b[pre : len(b)-suf] {
		out.WriteString("+ " + l + "\n")
	}
	for _, l := range a[len(a)-suf : min(len(a), len(a)-suf+context)] {
		out.WriteString("  " + l + "\n")
	}
	return out.String()
}
