package front

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/filesource"
	"fieldtap/mcp"
	"fieldtap/mcp/audit"
	"fieldtap/services/upload"
	"fieldtap/tools/refdata"
)

// detect is the daemon's content check of the captures area: what the
// --source detector reads (firmware/daemon/uploads.go), the real one.
func detect(_, path string) (string, error) {
	d, err := filesource.Describe(path, 0)
	if err != nil {
		return "", err
	}
	if d.Format == "" {
		return "", fmt.Errorf("the captures area takes pcap, pcapng, candump -l or J1708 logs: %s", d.Refused)
	}
	return string(d.Format), nil
}

// putServer is the real HTTP endpoint with tokens, the download route
// and the upload route over a table of one captures area with the real
// detector, its audit file in dir.
func putServer(t *testing.T, lim upload.Limits) (*httptest.Server, *upload.Table, string) {
	t.Helper()
	dir := t.TempDir()
	caps := filepath.Join(dir, "captures")
	table, err := upload.New([]upload.Area{{Name: "captures", Dir: caps, Check: detect}}, lim)
	if err != nil {
		t.Fatal(err)
	}
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), audit.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := evidenceFiles(t)
	e := NewHTTPEndpoint(testServer(t, mcp.Options{}), HTTPOptions{Tokens: testTokens(t), Audit: log, Log: testLog()})
	e.ServeFiles(mcp.FilesPath, NewFileServer(files))
	e.ServeUploads(mcp.FilesPath, table)
	ts := httptest.NewServer(e)
	t.Cleanup(func() { ts.Close(); e.Close(context.Background()); log.Close() })
	return ts, table, dir
}

type putReq struct {
	method, path, token string
	header              map[string]string
	body                []byte
}

func send(t *testing.T, ts *httptest.Server, q putReq) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(q.method, ts.URL+q.path, bytes.NewReader(q.body))
	if err != nil {
		t.Fatal(err)
	}
	if q.token != "" {
		req.Header.Set("Authorization", "Bearer "+q.token)
	}
	for k, v := range q.header {
		req.Header.Set(k, v)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func hexSum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func contentRange(first, last, total int) string {
	return fmt.Sprintf("bytes %d-%d/%d", first, last, total)
}

// auditLines reads the audit file's records.
func auditLines(t *testing.T, dir string) []audit.Record {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []audit.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestPutResumesAndLands: a real pcap sent in two ranges with a HEAD
// between, a range resent at the wrong offset refused 416 naming the
// offset, the file detected, stored byte for byte, and each step audited
// under the MCP tool's name with the PUT transport.
func TestPutResumesAndLands(t *testing.T) {
	data, err := os.ReadFile(refdata.File(t, "sip", "SIP_CALL_RTP_G711.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	ts, table, dir := putServer(t, upload.Limits{MaxFileBytes: 8 << 20, MaxTotalBytes: 8 << 20})
	path := mcp.FilesPath + "captures/call.pcap"
	half := len(data) / 2

	if resp, body := send(t, ts, putReq{method: http.MethodHead, path: path, token: secretOther}); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("HEAD before: %s %s", resp.Status, body)
	}
	resp, body := send(t, ts, putReq{method: http.MethodPut, path: path, token: secretOther, body: data[:half],
		header: map[string]string{"Content-Range": contentRange(0, half-1, len(data)), headerDigest: hexSum(data)}})
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get(headerUploadOffset) != strconv.Itoa(half) {
		t.Fatalf("first half: %s %v %s", resp.Status, resp.Header, body)
	}
	if names := visibleNames(t, filepath.Join(dir, "captures")); len(names) != 0 {
		t.Fatalf("the partial is visible: %v", names)
	}
	resp, _ = send(t, ts, putReq{method: http.MethodHead, path: path, token: secretOther})
	if resp.StatusCode != http.StatusOK || resp.Header.Get(headerUploadOffset) != strconv.Itoa(half) || resp.Header.Get(headerUploadLength) != strconv.Itoa(len(data)) {
		t.Fatalf("HEAD half way: %s %v", resp.Status, resp.Header)
	}
	if resp, _ := send(t, ts, putReq{method: http.MethodHead, path: path, token: secretRead}); resp.StatusCode != http.StatusNotFound {
		t.Errorf("HEAD half way with a read token: %s, want 404 (a partial is the uploader's)", resp.Status)
	}
	// Resent from the start: 416 naming where the upload stands.
	resp, body = send(t, ts, putReq{method: http.MethodPut, path: path, token: secretOther, body: data[:10],
		header: map[string]string{"Content-Range": contentRange(0, 9, len(data))}})
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable || resp.Header.Get(headerUploadOffset) != strconv.Itoa(half) || !strings.Contains(body, "stands at "+strconv.Itoa(half)) {
		t.Fatalf("wrong offset: %s %v %s", resp.Status, resp.Header, body)
	}
	// The second half names no digest: the upload in progress is found.
	resp, body = send(t, ts, putReq{method: http.MethodPut, path: path, token: secretOther, body: data[half:],
		header: map[string]string{"Content-Range": contentRange(half, len(data)-1, len(data))}})
	var done struct {
		Area, Name, Kind, SHA256 string
		Bytes                    int64
	}
	if err := json.Unmarshal([]byte(body), &done); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("second half: %s %s", resp.Status, body)
	}
	if done.Kind != "pcap" || done.Name != "call.pcap" || done.Bytes != int64(len(data)) || done.SHA256 != hexSum(data) || resp.Header.Get("Location") != path {
		t.Fatalf("finished: %+v %v", done, resp.Header)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "captures", "call.pcap")); !bytes.Equal(got, data) {
		t.Fatal("the stored file differs from the sent one")
	}
	if table.InProgress() != 0 {
		t.Fatalf("%d uploads still in progress", table.InProgress())
	}
	resp, _ = send(t, ts, putReq{method: http.MethodHead, path: path, token: secretRead})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Length") != strconv.Itoa(len(data)) || resp.Header.Get(headerUploadOffset) != strconv.Itoa(len(data)) {
		t.Fatalf("HEAD of the stored file: %s %v", resp.Status, resp.Header)
	}
	// Again: the name exists.
	resp, body = send(t, ts, putReq{method: http.MethodPut, path: path, token: secretOther, body: data, header: map[string]string{headerDigest: hexSum(data)}})
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "never replace") {
		t.Errorf("second upload of the name: %s %s", resp.Status, body)
	}

	var steps []string
	for _, r := range auditLines(t, dir) {
		if r.Caller.Transport != putTransport || r.Caller.Token != "other" {
			t.Errorf("record %+v: want transport %s, token other", r, putTransport)
		}
		steps = append(steps, r.Tool+":"+r.Outcome)
	}
	want := "upload_begin:ok upload_chunk:ok upload_chunk:tool_error upload_chunk:ok upload_finish:ok upload_begin:tool_error"
	if got := strings.Join(steps, " "); got != want {
		t.Errorf("audit steps\n got %s\nwant %s", got, want)
	}
}

func visibleNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestPutBegunOverMCPResumes: an upload the MCP tools began (the same
// table's Begin) takes its rest over PUT.
func TestPutBegunOverMCPResumes(t *testing.T) {
	data, err := os.ReadFile(refdata.File(t, "sip", "SIP_CALL_RTP_G711.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	ts, table, _ := putServer(t, upload.Limits{MaxFileBytes: 8 << 20, MaxTotalBytes: 8 << 20})
	b, err := table.Begin("captures", "mcp.pcap", int64(len(data)), hexSum(data))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := table.Chunk(b.ID, 0, data[:1000]); err != nil {
		t.Fatal(err)
	}
	resp, body := send(t, ts, putReq{method: http.MethodPut, path: mcp.FilesPath + "captures/mcp.pcap", token: secretOther, body: data[1000:],
		header: map[string]string{"Content-Range": contentRange(1000, len(data)-1, len(data)), headerDigest: hexSum(data)}})
	if resp.StatusCode != http.StatusCreated || !strings.Contains(body, `"kind":"pcap"`) {
		t.Fatalf("rest over PUT: %s %s", resp.Status, body)
	}
}

// TestPutRefusals: each refusal has its status and names what was wrong,
// and the refusals that drop an upload leave no partial behind.
func TestPutRefusals(t *testing.T) {
	data, err := os.ReadFile(refdata.File(t, "sip", "SIP_CALL_RTP_G711.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	text := []byte("this is a note, not a capture\n")
	ts, table, dir := putServer(t, upload.Limits{MaxFileBytes: int64(len(data)), MaxTotalBytes: int64(len(data)) + 10})
	caps := filepath.Join(dir, "captures")
	whole := func(b []byte) map[string]string { return map[string]string{headerDigest: hexSum(b)} }
	cases := []struct {
		name string
		q    putReq
		code int
		says string
	}{
		{"no token", putReq{path: "captures/a.pcap", body: data, header: whole(data)}, http.StatusUnauthorized, "bearer token required"},
		{"a wrong token", putReq{path: "captures/a.pcap", token: "nope", body: data, header: whole(data)}, http.StatusUnauthorized, "bearer token required"},
		{"a read token", putReq{path: "captures/a.pcap", token: secretRead, body: data, header: whole(data)}, http.StatusForbidden, "transmit scope"},
		{"over the file quota", putReq{path: "captures/big.pcap", token: secretOther, body: append(data, 0), header: whole(append(data, 0))}, http.StatusRequestEntityTooLarge, "files.max_file_bytes quota"},
		{"a digest that does not match", putReq{path: "captures/d.pcap", token: secretOther, body: data, header: whole(text)}, http.StatusUnprocessableEntity, "not the declared " + hexSum(text)},
		{"not a capture", putReq{path: "captures/note.pcap", token: secretOther, body: text, header: whole(text)}, http.StatusUnsupportedMediaType, "takes pcap, pcapng"},
		{"no digest, nothing in progress", putReq{path: "captures/x.pcap", token: secretOther, body: text}, http.StatusBadRequest, headerDigest},
		{"two digests", putReq{path: "captures/x.pcap?sha256=" + hexSum(data), token: secretOther, body: text, header: whole(text)}, http.StatusBadRequest, "different digests"},
		{"a hidden name", putReq{path: "captures/.x.pcap", token: secretOther, body: text, header: whole(text)}, http.StatusBadRequest, "hidden"},
		{"an encoded directory", putReq{path: "captures/..%2Fx.pcap", token: secretOther, body: text, header: whole(text)}, http.StatusBadRequest, "no directory"},
		{"another area", putReq{path: "exports/x.pcap", token: secretOther, body: text, header: whole(text)}, http.StatusNotFound, "uploads go to captures"},
		{"a malformed range", putReq{path: "captures/r.pcap", token: secretOther, body: text, header: map[string]string{"Content-Range": "bytes 0-5", headerDigest: hexSum(text)}}, http.StatusBadRequest, "no /TOTAL"},
		{"a range longer than the body", putReq{path: "captures/r.pcap", token: secretOther, body: text, header: map[string]string{"Content-Range": contentRange(0, len(text), 100), headerDigest: hexSum(text)}}, http.StatusBadRequest, "holds 31 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.method, tc.q.path = http.MethodPut, mcp.FilesPath+tc.q.path
			resp, body := send(t, ts, tc.q)
			if resp.StatusCode != tc.code || !strings.Contains(body, tc.says) {
				t.Errorf("%s: %s %q, want %d naming %q", tc.q.path, resp.Status, body, tc.code, tc.says)
			}
		})
	}
	if resp, body := send(t, ts, putReq{method: http.MethodPut, path: mcp.FilesPath + "captures/a.pcap", token: secretRead, body: data, header: whole(data)}); !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
		t.Errorf("read token: %v %s", resp.Header, body)
	}
	if n := table.InProgress(); n != 0 {
		t.Errorf("%d uploads in progress after refusals that drop them", n)
	}
	ents, _ := os.ReadDir(caps)
	for _, e := range ents {
		t.Errorf("%s left in captures", e.Name())
	}
	// The total quota counts an upload in progress by its declared size.
	half := len(data) / 2
	if resp, body := send(t, ts, putReq{method: http.MethodPut, path: mcp.FilesPath + "captures/one.pcap", token: secretOther, body: data[:half],
		header: map[string]string{"Content-Range": contentRange(0, half-1, len(data)), headerDigest: hexSum(data)}}); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("first half: %s %s", resp.Status, body)
	}
	if resp, body := send(t, ts, putReq{method: http.MethodPut, path: mcp.FilesPath + "captures/two.pcap", token: secretOther, body: text, header: whole(text)}); resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "files.max_total_bytes quota") {
		t.Errorf("over the total quota: %s %s", resp.Status, body)
	}
	// A size other than the upload's in progress.
	if resp, body := send(t, ts, putReq{method: http.MethodPut, path: mcp.FilesPath + "captures/one.pcap", token: secretOther, body: data[half : half+10],
		header: map[string]string{"Content-Range": contentRange(half, half+9, len(data)+1)}}); resp.StatusCode != http.StatusConflict {
		t.Errorf("another size: %s %s", resp.Status, body)
	}
}

// TestPutHeadOfOtherAreasIsTheDownloads: HEAD of a file the upload route
// does not own is the download route's answer.
func TestPutHeadOfOtherAreasIsTheDownloads(t *testing.T) {
	ts, _, _ := putServer(t, upload.Limits{MaxFileBytes: 1 << 20, MaxTotalBytes: 1 << 20})
	if resp, _ := send(t, ts, putReq{method: http.MethodHead, path: mcp.FilesPath + "exports/x.pcap", token: secretRead}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("HEAD of an unknown root: %s, want the download route's 403", resp.Status)
	}
	if resp, _ := send(t, ts, putReq{method: http.MethodHead, path: mcp.FilesPath + "captures/x.pcap"}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("HEAD without a token: %s", resp.Status)
	}
}

// TestPutCutMidBodyResumes: a body cut short (the cable dropped) keeps
// the bytes that arrived; HEAD says where the upload stands and the rest
// lands from there.
func TestPutCutMidBodyResumes(t *testing.T) {
	data, err := os.ReadFile(refdata.File(t, "sip", "SIP_CALL_RTP_G711.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	ts, _, _ := putServer(t, upload.Limits{MaxFileBytes: 8 << 20, MaxTotalBytes: 8 << 20})
	path := mcp.FilesPath + "captures/cut.pcap"
	const sent = 3000
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n%s: %s\r\nContent-Length: %d\r\n\r\n", path, secretOther, headerDigest, hexSum(data), len(data))
	conn.Write(data[:sent])
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get(headerUploadOffset) != strconv.Itoa(sent) || !strings.Contains(string(body), fmt.Sprintf("body ended after %d of its %d bytes", sent, len(data))) {
		t.Fatalf("cut body: %s %v %s", resp.Status, resp.Header, body)
	}
	resp, _ = send(t, ts, putReq{method: http.MethodHead, path: path, token: secretOther})
	if resp.Header.Get(headerUploadOffset) != strconv.Itoa(sent) {
		t.Fatalf("HEAD after the cut: %s %v", resp.Status, resp.Header)
	}
	resp, body2 := send(t, ts, putReq{method: http.MethodPut, path: path, token: secretOther, body: data[sent:],
		header: map[string]string{"Content-Range": contentRange(sent, len(data)-1, len(data))}})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("the rest: %s %s", resp.Status, body2)
	}
}

// onlyReader hides a reader's length, so the client sends the body
// chunked, as curl does reading a pipe.
type onlyReader struct{ io.Reader }

// TestPutChunkedRanges: a chunked body is taken to its Content-Range and
// must end there; one that runs on is refused with its range kept, and
// a whole file needs its Content-Length.
func TestPutChunkedRanges(t *testing.T) {
	data, err := os.ReadFile(refdata.File(t, "sip", "SIP_CALL_RTP_G711.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	ts, _, _ := putServer(t, upload.Limits{MaxFileBytes: 8 << 20, MaxTotalBytes: 8 << 20})
	path := ts.URL + mcp.FilesPath + "captures/piped.pcap"
	put := func(body []byte, h map[string]string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, path, onlyReader{bytes.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+secretOther)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := put(data, map[string]string{headerDigest: hexSum(data)}); resp.StatusCode != http.StatusLengthRequired {
		t.Fatalf("a whole file chunked: %s %s", resp.Status, body)
	}
	const first = 4000
	resp, body := put(data[:first+10], map[string]string{"Content-Range": contentRange(0, first-1, len(data)), headerDigest: hexSum(data)})
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get(headerUploadOffset) != strconv.Itoa(first) || !strings.Contains(body, "longer than its Content-Range") {
		t.Fatalf("a chunked body past its range: %s %v %s", resp.Status, resp.Header, body)
	}
	resp, body = put(data[first:], map[string]string{"Content-Range": contentRange(first, len(data)-1, len(data))})
	if resp.StatusCode != http.StatusCreated || !strings.Contains(body, `"kind":"pcap"`) {
		t.Fatalf("the rest, chunked: %s %s", resp.Status, body)
	}
}

// TestPutBusy: with maxPuts requests holding their bodies open, one more
// is answered 503 with Retry-After; the held ones then finish their
// ranges.
func TestPutBusy(t *testing.T) {
	ts, table, _ := putServer(t, upload.Limits{MaxFileBytes: 1 << 20, MaxTotalBytes: 1 << 20})
	file := []byte("a file that will never pass the detector, which is not the point")
	type held struct {
		w    *io.PipeWriter
		done chan *http.Response
	}
	var open []held
	for i := range maxPuts {
		pr, pw := io.Pipe()
		req, err := http.NewRequest(http.MethodPut, fmt.Sprintf("%s%scaptures/held%d.log", ts.URL, mcp.FilesPath, i), pr)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+secretOther)
		req.Header.Set("Content-Range", contentRange(0, 9, len(file)))
		req.Header.Set(headerDigest, hexSum(file))
		h := held{w: pw, done: make(chan *http.Response, 1)}
		go func() {
			resp, err := ts.Client().Do(req)
			if err != nil {
				h.done <- nil
				return
			}
			resp.Body.Close()
			h.done <- resp
		}()
		open = append(open, h)
		// Begun means the request holds its slot (taken before Begin).
		for {
			if _, ok := table.Find("captures", fmt.Sprintf("held%d.log", i)); ok {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	resp, body := send(t, ts, putReq{method: http.MethodPut, path: mcp.FilesPath + "captures/one-more.log", token: secretOther, body: file, header: map[string]string{headerDigest: hexSum(file)}})
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != strconv.Itoa(putRetryAfter) || !strings.Contains(body, "retry later") {
		t.Errorf("one past the bound: %s %v %s", resp.Status, resp.Header, body)
	}
	for _, h := range open {
		h.w.Write(file[:10])
		h.w.Close()
		if resp := <-h.done; resp == nil || resp.StatusCode != http.StatusNoContent {
			t.Errorf("a held request: %v", resp)
		}
	}
}
