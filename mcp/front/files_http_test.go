package front

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/mcp"
	"fieldtap/mcp/auth"
	"fieldtap/services/evidence"
	"fieldtap/services/recorder"
	"fieldtap/services/sandbox"
)

// evidenceFiles records CAN frames on a real recorder in a temp
// directory, seals one evidence bundle of them, and returns the sandbox
// over the bundles (verified against their digests, as the daemon mounts
// it) with the name of the bundle's capture.
func evidenceFiles(t *testing.T) (*sandbox.Sandbox, string) {
	t.Helper()
	dir := t.TempDir()
	rec, err := recorder.Open(recorder.Options{Dir: filepath.Join(dir, "rec")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	const step = 10 * time.Millisecond
	start := time.Now().Add(-time.Hour).Truncate(time.Second) // an hour ago: the window is recorded
	can := rec.Port("can0")
	for i := range 120 {
		b, err := wire.EncodeCAN(0x18FEF100|wire.CANEFF, []byte{byte(i), 2, 3, 4, 5, 6, 7, 8})
		if err != nil {
			t.Fatal(err)
		}
		can.Write(start.Add(time.Duration(i)*step), wire.LinkCANSocketCAN, b, 0)
	}
	rec.Flush()
	b, err := evidence.New(evidence.Options{Dir: filepath.Join(dir, "evidence"), Version: "test"}, rec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := b.Build(context.Background(), evidence.Request{Reason: "request", At: start.Add(10 * step), Before: 30 * time.Second, After: time.Second, Trigger: []byte("null")})
	if err != nil {
		t.Fatal(err)
	}
	files, err := sandbox.New(sandbox.Root{Name: "evidence", Dir: b.Dir(), Verify: func(rel string) error {
		id, _, _ := strings.Cut(rel, "/")
		_, err := b.Verify(id)
		return err
	}})
	if err != nil {
		t.Fatal(err)
	}
	return files, "evidence/" + m.ID + "/capture.pcapng"
}

// filesServer is the real HTTP endpoint with tokens on a real listener,
// serving an evidence bundle through the sandbox, as the daemon mounts it.
func filesServer(t *testing.T) (*httptest.Server, *FileServer, *sandbox.Sandbox, string) {
	t.Helper()
	files, name := evidenceFiles(t)
	fs := NewFileServer(files)
	e := NewHTTPEndpoint(testServer(t, mcp.Options{}), HTTPOptions{Tokens: testTokens(t), Log: testLog()})
	e.ServeFiles(mcp.FilesPath, fs)
	ts := httptest.NewServer(e)
	t.Cleanup(func() { ts.Close(); e.Close(context.Background()) })
	return ts, fs, files, name
}

func getFile(t *testing.T, ts *httptest.Server, path, token string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestFilesOverHTTP(t *testing.T) {
	ts, fs, files, name := filesServer(t)
	path, err := files.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	resp, body := getFile(t, ts, mcp.FilesPath+name, secretRead)
	if resp.StatusCode != http.StatusOK || sha256.Sum256(body) != sha256.Sum256(want) {
		t.Fatalf("GET %s: %s, %d bytes, want the file's %d", name, resp.Status, len(body), len(want))
	}
	if resp.Header.Get("Content-Length") != strconv.Itoa(len(want)) || resp.Header.Get("Content-Type") != "application/vnd.tcpdump.pcap" {
		t.Errorf("headers %v", resp.Header)
	}

	cases := []struct {
		name, path, token string
		code              int
	}{
		{name: "no token", path: mcp.FilesPath + name, code: http.StatusUnauthorized},
		{name: "a wrong token", path: mcp.FilesPath + name, token: "nope", code: http.StatusUnauthorized},
		{name: "an encoded traversal", path: mcp.FilesPath + "evidence/..%2F..%2Frec%2F.lock", token: secretRead, code: http.StatusForbidden},
		{name: "an unknown root", path: mcp.FilesPath + "etc/passwd", token: secretRead, code: http.StatusForbidden},
		{name: "a missing file", path: mcp.FilesPath + "evidence/ev-nope/capture.pcapng", token: secretRead, code: http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if resp, body := getFile(t, ts, tc.path, tc.token); resp.StatusCode != tc.code {
				t.Errorf("GET %s: %s %s, want %d", tc.path, resp.Status, body, tc.code)
			}
		})
	}

	// A bundle changed on disk is refused, never served.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(want, 0), 0o600); err != nil {
		t.Fatal(err)
	}
	if resp, _ := getFile(t, ts, mcp.FilesPath+name, secretRead); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a tampered bundle: %s, want 403", resp.Status)
	}

	// Every download slot taken: the next is refused 503, counted.
	for range maxDownloads {
		fs.slots <- struct{}{}
	}
	resp, _ = getFile(t, ts, mcp.FilesPath+name, secretRead)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("over the download bound: %s %v", resp.Status, resp.Header)
	}
	for range maxDownloads {
		<-fs.slots
	}

	st := fs.Stats()
	if st.Served != 1 || st.Bytes != uint64(len(want)) || st.Auth != 2 || st.Refused != 3 || st.Missing != 1 || st.Busy != 1 || st.Active != 0 {
		t.Errorf("counters %+v", st)
	}
}

// TestFilesRefuseSymlinks: a symbolic link inside a root is refused
// even with a valid token.
func TestFilesRefuseSymlinks(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("not yours"), 0o600)
	if err := os.Symlink(secret, filepath.Join(dir, "link.pcapng")); err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Root{Name: "exports", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	fs := NewFileServer(sb)
	e := NewHTTPEndpoint(testServer(t, mcp.Options{}), HTTPOptions{Tokens: testTokens(t)})
	e.ServeFiles(mcp.FilesPath, fs)
	ts := httptest.NewServer(e)
	defer ts.Close()
	if resp, body := getFile(t, ts, mcp.FilesPath+"exports/link.pcapng", secretRead); resp.StatusCode != http.StatusForbidden {
		t.Errorf("symlink: %s %s", resp.Status, body)
	}
}

// FuzzFilesName: whatever name a client sends, the download handler
// answers 200 only with the bytes of the one file inside the sandbox,
// and never with a byte of the file outside it.
func FuzzFilesName(f *testing.F) {
	for _, seed := range []string{"exports/a.pcapng", "exports/../secret", "exports/./a.pcapng", "/etc/passwd", "exports/", "exports//a.pcapng", "exports/.a.pcapng", "exports/a.pcapng/", "exports\\..\\secret", "exports/%2e%2e/secret"} {
		f.Add(seed)
	}
	dir := f.TempDir()
	exports := filepath.Join(dir, "exports")
	os.Mkdir(exports, 0o700)
	os.WriteFile(filepath.Join(exports, "a.pcapng"), []byte("inside"), 0o600)
	os.WriteFile(filepath.Join(dir, "secret"), []byte("outside"), 0o600)
	sb, err := sandbox.New(sandbox.Root{Name: "exports", Dir: exports})
	if err != nil {
		f.Fatal(err)
	}
	fs := NewFileServer(sb)
	f.Fuzz(func(t *testing.T, name string) {
		w := httptest.NewRecorder()
		fs.serve(w, httptest.NewRequest(http.MethodGet, "/files/x", nil), name)
		body := w.Body.String()
		if strings.Contains(body, "outside") {
			t.Fatalf("%q served the file outside the sandbox", name)
		}
		if w.Code == http.StatusOK && body != "inside" {
			t.Fatalf("%q: 200 with %q", name, body)
		}
	})
}

// BenchmarkFilesDownload times GET /files of a 32 MiB file through the
// endpoint's token check on a loopback listener, the client reading
// every byte.
func BenchmarkFilesDownload(b *testing.B) {
	const size = 32 << 20
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.pcapng"), make([]byte, size), 0o600); err != nil {
		b.Fatal(err)
	}
	sb, err := sandbox.New(sandbox.Root{Name: "exports", Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	tok, err := auth.ParseTokens(strings.NewReader(auth.HashToken("bench", "s3cret")))
	if err != nil {
		b.Fatal(err)
	}
	e := NewHTTPEndpoint(testServer(b, mcp.Options{Bundles: []string{}}), HTTPOptions{Tokens: tok})
	e.ServeFiles(mcp.FilesPath, NewFileServer(sb))
	ts := httptest.NewServer(e)
	defer ts.Close()
	defer e.Close(context.Background())
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+mcp.FilesPath+"exports/big.pcapng", nil)
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := ts.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n != size {
			b.Fatalf("%s, %d bytes", resp.Status, n)
		}
	}
}
