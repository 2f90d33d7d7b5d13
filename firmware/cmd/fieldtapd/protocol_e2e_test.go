package main

// Protocol transcripts: the MCP wire around the tools (initialize,
// tools/list, resources, templates, prompts, completions, errors) pinned
// as txtar cases in testdata/protocol/, as mcp-go and go-sdk keep theirs.
// Each case is played over stdio against the real binary on the seeded
// simulated board, after every port is read; `-update` rewrites the
// -- server -- part.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"
)

// protocolArgs start every case: the sim board at its fixed clock, one
// pass as fast as the analysers take it.
var protocolArgs = []string{"--mcp-transport", "stdio", "--board", "sim", "--replay-speed", "max", "--sim-start", goldenSimStart}

// protocolInit opens a session; a case that is about initialize sends its
// own instead.
const protocolInit = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fieldtap-transcripts","version":"1"}}}`

func TestProtocolTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "protocol", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no protocol cases under testdata/protocol: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var client []string
			extra := []string{}
			for _, f := range ar.Files {
				switch f.Name {
				case "client":
					for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
						if l = strings.TrimSpace(l); l != "" {
							client = append(client, l)
						}
					}
				case "args":
					extra = strings.Fields(string(f.Data))
				}
			}
			got := playProtocol(t, append(append([]string{}, protocolArgs...), extra...), client)
			checkProtocol(t, file, ar, got)
		})
	}
}

// wireSession is one daemon spoken to line by line over stdio.
type wireSession struct {
	t      *testing.T
	in     io.Writer
	out    *bufio.Scanner
	stderr *lockedBuffer
}

func (w *wireSession) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.in, line+"\n"); err != nil {
		w.t.Fatalf("write %s: %v\nstderr:\n%s", line, err, w.stderr.String())
	}
}

// answer reads until the response to id arrives; notifications on the
// way are asynchronous and not part of the transcript.
func (w *wireSession) answer(id any) map[string]any {
	w.t.Helper()
	want := idKey(id)
	for w.out.Scan() {
		var msg map[string]any
		d := json.NewDecoder(bytes.NewReader(w.out.Bytes()))
		d.UseNumber()
		if err := d.Decode(&msg); err != nil {
			w.t.Fatalf("stdout carried a line that is not JSON: %q", w.out.Text())
		}
		if got, has := msg["id"]; has && idKey(got) == want {
			return msg
		}
	}
	w.t.Fatalf("no answer to id %s (stdout ended: %v)\nstderr:\n%s", want, w.out.Err(), w.stderr.String())
	return nil
}

// idKey is a JSON-RPC id as its JSON text, so 1 and "1" differ.
func idKey(id any) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// playProtocol starts the daemon, opens a session unless the case does,
// waits until every port is read, then sends each client line and
// collects the answers to those that carry an id.
func playProtocol(t *testing.T, args, client []string) []byte {
	t.Helper()
	cmd := exec.Command(binary, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w := &wireSession{t: t, in: stdin, stderr: &lockedBuffer{}}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	w.out = bufio.NewScanner(stdout)
	w.out.Buffer(make([]byte, 0, 1<<20), 16<<20)

	initialised := len(client) > 0 && strings.Contains(client[0], `"initialize"`)
	if !initialised {
		w.send(protocolInit)
		w.answer("init")
		w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	run := ""
	if !initialised {
		run = w.waitRead()
	}
	var b bytes.Buffer
	for _, line := range client {
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			// A line that is not JSON is the case itself (a parse error).
			msg = map[string]any{"id": nil}
		}
		w.send(line)
		id, has := msg["id"]
		if !has {
			continue
		}
		b.Write(encodeIndented(normaliseValue(w.answer(id), run)))
		b.WriteString("\n")
		if initialised && msg["method"] == "initialize" {
			w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		}
	}
	return b.Bytes()
}

// waitRead polls capture_status (outside the transcript) until every
// port's source is read and consumed, and returns the run's identity.
func (w *wireSession) waitRead() string {
	w.t.Helper()
	deadline := time.Now().Add(giveUp)
	for i := 0; ; i++ {
		id := fmt.Sprintf("wait-%d", i)
		w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"capture_status","arguments":{}}}`, id))
		res, _ := w.answer(id)["result"].(map[string]any)
		content, _ := res["content"].([]any)
		if len(content) > 0 {
			text, _ := content[0].(map[string]any)["text"].(string)
			var env envelope
			json.Unmarshal([]byte(text), &env)
			done := len(env.Data.Ports) > 0
			for _, p := range env.Data.Ports {
				done = done && p.SourceExhausted
			}
			if done {
				return env.Source.CaptureIdentity
			}
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("ports never exhausted\nstderr:\n%s", w.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkProtocol compares the answers with the case's -- server -- part,
// or rewrites it under -update.
func checkProtocol(t *testing.T, file string, ar *txtar.Archive, got []byte) {
	t.Helper()
	idx := -1
	for i, f := range ar.Files {
		if f.Name == "server" {
			idx = i
		}
	}
	if *update {
		if idx < 0 {
			ar.Files = append(ar.Files, txtar.File{Name: "server"})
			idx = len(ar.Files) - 1
		}
		ar.Files[idx].Data = got
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if idx < 0 {
		t.Fatalf("%s has no -- server -- part (-update writes it)", file)
	}
	if want := ar.Files[idx].Data; !bytes.Equal(want, got) {
		t.Errorf("%s: the server's answers differ (-update rewrites them):\n%s", file, lineDiff(string(want), string(got)))
	}
}
