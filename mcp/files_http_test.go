package mcp

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"fieldtap/services/sandbox"
)

// filesServer is the real HTTP endpoint with tokens on a real listener,
// serving an export directory and an evidence bundle through the one
// sandbox, as the daemon mounts it.
func filesServer(t *testing.T) (*httptest.Server, *FileServer, Deps) {
	t.Helper()
	d := blackboxDeps(t)
	s := testServer(t, d, blackboxTools...)
	e := NewHTTPEndpoint(s, HTTPOptions{Tokens: testTokens(t), Log: d.Log})
	e.ServeFiles(d.BlackBox.Downloads)
	ts := httptest.NewServer(e)
	t.Cleanup(func() { ts.Close(); e.Close(context.Background()) })
	return ts, d.BlackBox.Downloads, d
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
	ts, fs, d := filesServer(t)
	_, env := callTool(t, testServer(t, d, blackboxTools...), "build_evidence_package", map[string]any{"at": at(10), "after_s": 1})
	if env["ok"] != true {
		t.Fatal(env)
	}
	name := "evidence/" + env["data"].(map[string]any)["id"].(string) + "/capture.pcapng"
	path, err := d.BlackBox.Files.Path(name)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	resp, body := getFile(t, ts, FilesPath+name, secretRead)
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
		{name: "no token", path: FilesPath + name, code: http.StatusUnauthorized},
		{name: "a wrong token", path: FilesPath + name, token: "nope", code: http.StatusUnauthorized},
		{name: "an encoded traversal", path: FilesPath + "evidence/..%2F..%2Frec%2F.lock", token: secretRead, code: http.StatusForbidden},
		{name: "an unknown root", path: FilesPath + "etc/passwd", token: secretRead, code: http.StatusForbidden},
		{name: "a missing file", path: FilesPath + "evidence/ev-nope/capture.pcapng", token: secretRead, code: http.StatusNotFound},
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
	if resp, _ := getFile(t, ts, FilesPath+name, secretRead); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a tampered bundle: %s, want 403", resp.Status)
	}

	// Every download slot taken: the next is refused 503, counted.
	for range MaxDownloads {
		fs.slots <- struct{}{}
	}
	resp, _ = getFile(t, ts, FilesPath+name, secretRead)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("over the download bound: %s %v", resp.Status, resp.Header)
	}
	for range MaxDownloads {
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
	e := NewHTTPEndpoint(testServer(t, testDeps()), HTTPOptions{Tokens: testTokens(t)})
	e.ServeFiles(fs)
	ts := httptest.NewServer(e)
	defer ts.Close()
	if resp, body := getFile(t, ts, FilesPath+"exports/link.pcapng", secretRead); resp.StatusCode != http.StatusForbidden {
		t.Errorf("symlink: %s %s", resp.Status, body)
	}
}
