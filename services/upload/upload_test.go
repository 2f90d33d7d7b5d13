package upload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkPrefix is a content check that takes files starting with "ok".
func checkPrefix(_, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if !bytes.HasPrefix(b, []byte("ok")) {
		return "", fmt.Errorf("first bytes %.8q are no ok file", b)
	}
	return "okfile", nil
}

func newTable(t *testing.T, lim Limits) (*Table, string) {
	t.Helper()
	dir := t.TempDir()
	tb, err := New([]Area{{Name: "captures", Dir: dir, Check: checkPrefix}}, lim)
	if err != nil {
		t.Fatal(err)
	}
	return tb, dir
}

func digest(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func refused(t *testing.T, err error, want string) {
	t.Helper()
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want a refusal naming %q", err, want)
	}
}

// visible lists dir as a listing does: dot-files are hidden.
func visible(t *testing.T, dir string) []string {
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

func TestUploadResumesAtTheStatedOffset(t *testing.T) {
	tb, dir := newTable(t, Limits{MaxFileBytes: 1 << 20, MaxTotalBytes: 4 << 20})
	data := append([]byte("ok"), bytes.Repeat([]byte("x"), 1000)...)
	b, err := tb.Begin("captures", "a.log", int64(len(data)), digest(data))
	if err != nil || b.Next != 0 || b.Resumed {
		t.Fatalf("begin = %+v, %v", b, err)
	}
	if next, err := tb.Chunk(b.ID, 0, data[:400]); err != nil || next != 400 {
		t.Fatalf("chunk = %d, %v", next, err)
	}
	if got := visible(t, dir); len(got) != 0 {
		t.Fatalf("partial visible: %v", got)
	}
	// A client that lost its state begins again and is told where to go on.
	r, err := tb.Begin("captures", "a.log", int64(len(data)), strings.ToUpper(digest(data)))
	if err != nil || r.ID != b.ID || r.Next != 400 || !r.Resumed {
		t.Fatalf("resume = %+v, %v", r, err)
	}
	_, err = tb.Chunk(b.ID, 300, data[300:])
	refused(t, err, "stands at 400")
	if _, err := tb.Finish(b.ID); err == nil || !strings.Contains(err.Error(), "send the rest from offset 400") {
		t.Fatalf("early finish = %v", err)
	}
	if _, err := tb.Chunk(b.ID, 400, data[400:]); err != nil {
		t.Fatal(err)
	}
	d, err := tb.Finish(b.ID)
	if err != nil || d.Kind != "okfile" || d.Bytes != int64(len(data)) {
		t.Fatalf("finish = %+v, %v", d, err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a.log"))
	if !bytes.Equal(got, data) {
		t.Fatal("stored bytes differ")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("dir holds %d entries, want the file alone", len(ents))
	}
	_, err = tb.Chunk(b.ID, 0, data)
	refused(t, err, "no such upload")
	_, err = tb.Begin("captures", "a.log", int64(len(data)), digest(data))
	refused(t, err, "never replace")
}

func TestUploadRefusals(t *testing.T) {
	tb, dir := newTable(t, Limits{MaxFileBytes: 100, MaxTotalBytes: 150})
	d := digest([]byte("ok"))
	for _, tc := range []struct {
		area, name string
		size       int64
		digest     string
		want       string
	}{
		{"exports", "a", 10, d, `area "exports"`},
		{"captures", "../a", 10, d, "no directory"},
		{"captures", ".a", 10, d, "hidden"},
		{"captures", "a.tmp", 10, d, "hidden"},
		{"captures", "a", 10, "abc", "64 hex digits"},
		{"captures", "a", 0, d, "at least 1 byte"},
		{"captures", "a", 101, d, "files.max_file_bytes quota of 100"},
	} {
		_, err := tb.Begin(tc.area, tc.name, tc.size, tc.digest)
		refused(t, err, tc.want)
	}
	if err := os.WriteFile(filepath.Join(dir, "stored"), make([]byte, 60), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Begin("captures", "a", 50, d); err != nil {
		t.Fatal(err)
	}
	_, err := tb.Begin("captures", "b", 41, d)
	refused(t, err, "110 stored or in progress is over the files.max_total_bytes quota of 150")
	_, err = tb.Begin("captures", "a", 51, d)
	refused(t, err, "another size or digest")
	b, err := tb.Begin("captures", "c", 40, d)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.Chunk(b.ID, 0, make([]byte, 41))
	refused(t, err, "runs past the declared size 40")
	_, err = tb.Chunk("nope", 0, []byte("x"))
	refused(t, err, `upload "nope"`)
}

func TestUploadChunkBound(t *testing.T) {
	tb, _ := newTable(t, Limits{MaxFileBytes: 4 * MaxChunk, MaxTotalBytes: 4 * MaxChunk})
	b, err := tb.Begin("captures", "big", 2*MaxChunk, digest(nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.Chunk(b.ID, 0, make([]byte, MaxChunk+1))
	refused(t, err, fmt.Sprintf("at most %d", MaxChunk))
}

func TestUploadDigestMismatchDrops(t *testing.T) {
	tb, dir := newTable(t, Limits{MaxFileBytes: 100, MaxTotalBytes: 100})
	data := []byte("ok then")
	b, _ := tb.Begin("captures", "a", int64(len(data)), digest([]byte("ok than")))
	if _, err := tb.Chunk(b.ID, 0, data); err != nil {
		t.Fatal(err)
	}
	_, err := tb.Finish(b.ID)
	refused(t, err, "not the declared "+digest([]byte("ok than")))
	if ents, _ := os.ReadDir(dir); len(ents) != 0 || tb.InProgress() != 0 {
		t.Fatalf("after a mismatch: %d entries, %d in progress", len(ents), tb.InProgress())
	}
}

func TestUploadContentRefused(t *testing.T) {
	tb, dir := newTable(t, Limits{MaxFileBytes: 100, MaxTotalBytes: 100})
	data := []byte("GIF89a")
	b, _ := tb.Begin("captures", "a.pcap", int64(len(data)), digest(data))
	if _, err := tb.Chunk(b.ID, 0, data); err != nil {
		t.Fatal(err)
	}
	_, err := tb.Finish(b.ID)
	refused(t, err, `captures/a.pcap: not kept: first bytes "GIF89a" are no ok file`)
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("refused content left %d entries", len(ents))
	}
}

func TestUploadExpiresAndStalePartialsGo(t *testing.T) {
	tb, dir := newTable(t, Limits{MaxFileBytes: 100, MaxTotalBytes: 100, Expiry: time.Hour})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tb.now = func() time.Time { return now }
	b, _ := tb.Begin("captures", "a", 10, digest(nil))
	if _, err := tb.Chunk(b.ID, 0, []byte("ok")); err != nil {
		t.Fatal(err)
	}
	// A restart finds the partial and removes it.
	if _, err := New([]Area{{Name: "captures", Dir: dir, Check: checkPrefix}}, Limits{MaxFileBytes: 1, MaxTotalBytes: 1}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("restart left %d partials", len(ents))
	}
	b, _ = tb.Begin("captures", "b", 10, digest(nil))
	now = now.Add(time.Hour)
	_, err := tb.Chunk(b.ID, 0, []byte("ok"))
	refused(t, err, "expired after 1h0m0s")
	if ents, _ := os.ReadDir(dir); len(ents) != 0 || tb.InProgress() != 0 {
		t.Fatalf("expiry left %d entries, %d in progress", len(ents), tb.InProgress())
	}
}

func TestUploadTableBound(t *testing.T) {
	tb, _ := newTable(t, Limits{MaxFileBytes: 1, MaxTotalBytes: 1 << 20})
	for i := range MaxInProgress {
		if _, err := tb.Begin("captures", fmt.Sprint(i), 1, digest(nil)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := tb.Begin("captures", "one more", 1, digest(nil))
	refused(t, err, fmt.Sprintf("%d uploads are in progress", MaxInProgress))
}

// TestUploadFoundByNameAndCaused: a transport that names the file finds
// its upload in progress, then the stored file; each refusal carries the
// cause a transport answers it by.
func TestUploadFoundByNameAndCaused(t *testing.T) {
	tb, _ := newTable(t, Limits{MaxFileBytes: 100, MaxTotalBytes: 110})
	data := []byte("ok-found-by-name")
	if _, ok := tb.Find("captures", "f.log"); ok {
		t.Fatal("found an upload before any began")
	}
	b, err := tb.Begin("captures", "f.log", int64(len(data)), digest(data))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Chunk(b.ID, 0, data[:5]); err != nil {
		t.Fatal(err)
	}
	if f, ok := tb.Find("captures", "f.log"); !ok || f.ID != b.ID || f.Next != 5 || f.Size != int64(len(data)) {
		t.Fatalf("find = %+v, %v", f, ok)
	}
	if _, ok := tb.Stored("captures", "f.log"); ok {
		t.Fatal("an upload in progress is stored")
	}
	cause := func(err error, want Cause) {
		t.Helper()
		if c, ok := CauseOf(err); !ok || c != want || !errors.Is(err, ErrRefused) {
			t.Fatalf("%v: cause %v %v, want %v", err, c, ok, want)
		}
	}
	_, err = tb.Chunk(b.ID, 0, data)
	cause(err, CauseOffset)
	_, err = tb.Begin("captures", "g.log", 101, digest(data))
	cause(err, CauseQuota)
	_, err = tb.Begin("captures", "g.log", 100, digest(data))
	cause(err, CauseQuota) // 16 declared in progress plus 100 is over 110
	_, err = tb.Begin("captures", "f.log", 9, digest(data))
	cause(err, CauseConflict)
	_, err = tb.Begin("captures", ".f.log", 9, digest(data))
	cause(err, CauseRequest)
	_, err = tb.Chunk("0123456789abcdef", 0, data)
	cause(err, CauseGone)
	if _, ok := CauseOf(errors.New("disk")); ok {
		t.Fatal("a plain error has a cause")
	}
	if _, err := tb.Chunk(b.ID, 5, data[5:]); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Finish(b.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := tb.Find("captures", "f.log"); ok {
		t.Fatal("a finished upload is still in progress")
	}
	if fi, ok := tb.Stored("captures", "f.log"); !ok || fi.Size() != int64(len(data)) {
		t.Fatalf("stored = %v, %v", fi, ok)
	}
	bad := []byte("no, not ok")
	b, err = tb.Begin("captures", "bad.log", int64(len(bad)), digest(data))
	if err != nil {
		t.Fatal(err)
	}
	tb.Chunk(b.ID, 0, bad)
	_, err = tb.Finish(b.ID)
	cause(err, CauseDigest)
	b, _ = tb.Begin("captures", "bad.log", int64(len(bad)), digest(bad))
	tb.Chunk(b.ID, 0, bad)
	_, err = tb.Finish(b.ID)
	cause(err, CauseContent)
}
