package main

// End-to-end tests: the real fieldtapd binary, driven by the official MCP
// go-sdk client over stdio and streamable HTTP.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// giveUp bounds how long a test waits for traffic before failing; it is
// not a performance assertion.
const giveUp = 60 * time.Second

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fieldtapd-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "fieldtapd")
	build := exec.Command("go", "build", "-o", binary, ".")
	// As the product is built, also when the race run turns cgo on for
	// the test binaries.
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build fieldtapd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// portStatus is the part of capture_status the tests read.
type portStatus struct {
	Name            string            `json:"name"`
	Kind            string            `json:"kind"`
	Source          string            `json:"source"`
	Live            bool              `json:"live"`
	Frames          uint64            `json:"frames"`
	Drops           map[string]uint64 `json:"drops"`
	Errors          map[string]uint64 `json:"errors"`
	SourceExhausted bool              `json:"source_exhausted"`
	StoppedEarly    string            `json:"stopped_early"`
	Restarts        uint64            `json:"restarts"`
	LastError       string            `json:"last_error"`
	State           string            `json:"state"`
	StateSince      *time.Time        `json:"state_since"`
}

type envelope struct {
	OK   bool `json:"ok"`
	Data struct {
		Ports []portStatus `json:"ports"`
	} `json:"data"`
	Source struct {
		CaptureIdentity string `json:"capture_identity"`
	} `json:"source"`
	Errors []struct{ Code, Message string } `json:"errors"`
}

func captureStatus(t *testing.T, ctx context.Context, s *sdk.ClientSession) envelope {
	t.Helper()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "capture_status", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("capture_status: %v", err)
	}
	if res.IsError || len(res.Content) == 0 {
		t.Fatalf("capture_status failed: %+v", res)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	var env envelope
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		t.Fatalf("envelope %q: %v", text, err)
	}
	// structuredContent rides only with --mcp-output-schemas (the
	// conformance run's); then it is the same object.
	if res.StructuredContent != nil {
		structured, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		json.Unmarshal([]byte(text), &a)
		json.Unmarshal(structured, &b)
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("structuredContent differs from the text block")
		}
	}
	return env
}

// waitAllCounting polls capture_status until every named port has frames.
func waitAllCounting(t *testing.T, ctx context.Context, s *sdk.ClientSession, names ...string) envelope {
	t.Helper()
	deadline := time.Now().Add(giveUp)
	for {
		env := captureStatus(t, ctx, s)
		missing := []string{}
		for _, want := range names {
			found := false
			for _, p := range env.Data.Ports {
				if p.Name == want && p.Frames > 0 {
					found = true
				}
			}
			if !found {
				missing = append(missing, want)
			}
		}
		if len(missing) == 0 {
			return env
		}
		if time.Now().After(deadline) {
			t.Fatalf("ports %v never counted a frame: %+v", missing, env.Data.Ports)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func checkTools(t *testing.T, ctx context.Context, s *sdk.ClientSession) {
	t.Helper()
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"capture_status", "server_capabilities"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s (has %v)", want, names)
		}
	}
}

func newClient() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "fieldtap-e2e", Version: "1"}, nil)
}

func TestStdioSimBoardCounts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	cmd := exec.Command(binary, "--mcp-transport", "stdio")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	s, err := newClient().Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	defer s.Close()
	checkTools(t, ctx, s)
	env := waitAllCounting(t, ctx, s, "span0", "can0", "j1708")
	for _, p := range env.Data.Ports {
		if !p.Live || p.SourceExhausted {
			t.Errorf("sim port %s: live=%v exhausted=%v, want a live port", p.Name, p.Live, p.SourceExhausted)
		}
	}
}

// startHTTP runs fieldtapd on an ephemeral port and returns its MCP URL.
func startHTTP(t *testing.T, args ...string) (*exec.Cmd, string, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--mcp-transport", "http", "--mcp-listen", "127.0.0.1:0"}, args...)...)
	stderr := &lockedBuffer{}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`url=(http://\S+)`)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stderr.Write(append(sc.Bytes(), '\n'))
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urlc <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		pw.Close()
	})
	select {
	case u := <-urlc:
		return cmd, u, stderr
	case <-time.After(giveUp):
		t.Fatalf("fieldtapd never said where it listens:\n%s", stderr.String())
	}
	return nil, "", nil
}

func TestHTTPSimBoardCounts(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol="+cmp(version, "latest"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
			defer cancel()
			_, url, stderr := startHTTP(t)
			s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect %s: %v\nstderr:\n%s", url, err, stderr.String())
			}
			defer s.Close()
			if version != "" && s.InitializeResult().ProtocolVersion != version {
				t.Errorf("negotiated %s, want %s", s.InitializeResult().ProtocolVersion, version)
			}
			checkTools(t, ctx, s)
			waitAllCounting(t, ctx, s, "span0", "can0", "j1708")
		})
	}
}

func cmp(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

func TestSIGTERMShutsDownCleanly(t *testing.T) {
	cmd, _, stderr := startHTTP(t)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(giveUp):
		t.Fatal("fieldtapd did not stop after SIGTERM")
	}
}

// TestStdioStdoutIsOnlyJSONRPC drives the wire by hand with debug logging
// on and checks every stdout line is a JSON-RPC message.
func TestStdioStdoutIsOnlyJSONRPC(t *testing.T) {
	cmd := exec.Command(binary, "--mcp-transport", "stdio", "--log-level", "debug", "--board", "none",
		"--source", writeBadFile(t, "notes.txt", []byte("not a capture\n")))
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	io.WriteString(stdin, strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"capture_status","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"capture_status","arguments":{"bogus":1}}}`,
		``,
	}, "\n"))

	// Read every stdout line until all four answers are in, then close
	// stdin. (Answers owed at end-of-input are the subject of
	// front.TestStdioAnswersEverythingReadBeforeEOF.)
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	ids := map[float64]bool{}
	var all []string
	deadline := time.After(giveUp)
	for len(ids) < 4 {
		select {
		case line, open := <-lines:
			if !open {
				t.Fatalf("stdout closed after %d answers; stderr:\n%s", len(ids), stderr.String())
			}
			all = append(all, line)
			var msg map[string]any
			if err := json.Unmarshal([]byte(line), &msg); err != nil || msg["jsonrpc"] != "2.0" {
				t.Fatalf("stdout line is not JSON-RPC: %q", line)
			}
			if id, ok := msg["id"].(float64); ok {
				ids[id] = true
				if id == 4 {
					res, _ := msg["result"].(map[string]any)
					if res == nil || res["isError"] != true {
						t.Errorf("an unknown argument must be a tool error, got %v", msg)
					}
				}
			}
		case <-deadline:
			t.Fatalf("answers to %v only; stdout:\n%s", ids, strings.Join(all, "\n"))
		}
	}
	stdin.Close()
	for line := range lines { // whatever else reaches stdout before exit must be JSON-RPC too
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not JSON-RPC: %q", line)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("fieldtapd: %v\n%s", err, stderr.String())
		}
	case <-time.After(giveUp):
		t.Fatal("fieldtapd did not exit when stdin closed")
	}
	if !strings.Contains(stderr.String(), "level=DEBUG") {
		t.Errorf("expected debug logs on stderr, got %q", stderr.String())
	}
}

func writeBadFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBadCaptureFilesDoNotStopTheBox gives the sim board a truncated pcap
// and a text file: both ports report why they stopped, with the file and
// byte offset, and the sim ports keep counting.
func TestBadCaptureFilesDoNotStopTheBox(t *testing.T) {
	good := filepath.Join(t.TempDir(), "sip.pcapng")
	gen := exec.Command("go", "run", "fieldtap/tools/cmd/fieldtap", "gen", "sip", "-o", good, "-duration", "10s")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("fieldtap gen: %v\n%s", err, out)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := writeBadFile(t, "cut.pcapng", b[:len(b)/2])
	notCapture := writeBadFile(t, "notes.pcap", []byte("these are my notes\n"))

	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	_, url, stderr := startHTTP(t, "--source", good, "--source", truncated, "--source", notCapture)
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer s.Close()
	env := waitAllCounting(t, ctx, s, "span0", "can0", "j1708", "file1", "file2")
	deadline := time.Now().Add(giveUp)
	for !exhausted(env, "file1", "file2", "file3") {
		if time.Now().After(deadline) {
			t.Fatalf("file ports never finished: %+v", env.Data.Ports)
		}
		time.Sleep(100 * time.Millisecond)
		env = captureStatus(t, ctx, s)
	}
	byName := map[string]portStatus{}
	for _, p := range env.Data.Ports {
		byName[p.Name] = p
	}
	if p := byName["file1"]; p.StoppedEarly != "" || p.Live {
		t.Errorf("good file: %+v", p)
	}
	p := byName["file2"]
	if !strings.Contains(p.StoppedEarly, truncated) || !strings.Contains(p.StoppedEarly, "byte offset") || p.Frames == 0 || p.Frames >= byName["file1"].Frames {
		t.Errorf("truncated file: %+v; want frames read before the fault and a reason naming the file and offset", p)
	}
	p = byName["file3"]
	if p.Kind != "unknown" || !strings.Contains(p.StoppedEarly, notCapture) || !p.SourceExhausted {
		t.Errorf("text file: %+v", p)
	}
	// The box still serves its live ports after the bad files.
	before := byName["can0"].Frames
	waitMore(t, ctx, s, "can0", before)
}

func exhausted(env envelope, names ...string) bool {
	for _, p := range env.Data.Ports {
		for _, n := range names {
			if p.Name == n && !p.SourceExhausted {
				return false
			}
		}
	}
	return true
}

func waitMore(t *testing.T, ctx context.Context, s *sdk.ClientSession, name string, than uint64) {
	t.Helper()
	deadline := time.Now().Add(giveUp)
	for time.Now().Before(deadline) {
		for _, p := range captureStatus(t, ctx, s).Data.Ports {
			if p.Name == name && p.Frames > than {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("port %s stopped counting", name)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
