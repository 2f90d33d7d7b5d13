package main

// SIP over TLS through the real binary: the TLS 1.3 reference capture
// read with the key log it carries (its Decryption Secrets Block), and
// a copy without it read with the same key log as tls.key_logs. The
// box must decode tshark's 13 messages, and no answer, log line, audit
// line or export may carry a secret of the key log.

import (
	"bytes"
	be "encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/drivers/pcapfile"
	"fieldtap/tools/refdata"
)

// keyLogOf returns the key log a capture's secrets blocks carry and the
// secrets in it, as hex and as bytes.
func keyLogOf(t *testing.T, path string) (keyLog []byte, secrets [][]byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := pcapfile.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	rd.OnSecrets(func(typ uint32, data []byte) { keyLog = append(keyLog, data...) })
	for {
		if _, err := rd.Next(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
	}
	for _, line := range strings.Split(string(keyLog), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		raw, err := hex.DecodeString(f[2])
		if err != nil {
			t.Fatal(err)
		}
		// upper and lower case hex, and the raw bytes
		secrets = append(secrets, []byte(strings.ToLower(f[2])), []byte(strings.ToUpper(f[2])), raw)
	}
	if len(secrets) == 0 {
		t.Fatal("the reference capture carries no key log")
	}
	return keyLog, secrets
}

// leaked says whether text holds any of the secrets (or 16 bytes of one).
func leaked(text []byte, secrets [][]byte) bool {
	for _, s := range secrets {
		if bytes.Contains(text, s[:min(16, len(s))]) {
			return true
		}
	}
	return false
}

func leaks(t *testing.T, where string, text []byte, secrets [][]byte) {
	t.Helper()
	if leaked(text, secrets) {
		t.Errorf("%s carries key material", where)
	}
}

func TestTLSKeysEndToEnd(t *testing.T) {
	ref := refdata.File(t, "sip", "gen-sipp-hold-resume-tls13-with-keys.pcapng")
	keyLog, secrets := keyLogOf(t, ref)
	dir := t.TempDir()
	noSecrets := filepath.Join(dir, "tls13-no-secrets.pcapng")
	dropSecrets(t, ref, noSecrets)
	if _, again := keyLogOf2(t, noSecrets); again {
		t.Fatal("the copy still has a secrets block")
	}
	if !leaked(keyLog, secrets) {
		t.Fatal("the search does not find the secrets in the key log itself")
	}
	keyFile := writeFile(t, filepath.Join(dir, "pbx.keylog"), keyLog)
	if err := os.Chmod(keyFile, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, source, config string
	}{
		{"secrets block in the capture", ref, ""},
		{"tls.key_logs", noSecrets, "[tls]\nkey_logs = [\"" + keyFile + "\"]\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := t.TempDir()
			exports, audit := filepath.Join(run, "exports"), filepath.Join(run, "audit.jsonl")
			cfg := writeFile(t, filepath.Join(run, "fieldtapd.toml"),
				[]byte("[store]\nexport_dir = \""+exports+"\"\n"+tc.config))
			cc := startContract(t, "--config", cfg, "--board", "none", "--source", tc.source,
				"--mcp-bundles", goldenBundles, "--mcp-audit-file", audit)
			cc.waitExhausted()

			env, blocks := cc.call("get_capture_report", map[string]any{})
			var report struct {
				Data struct {
					Store struct {
						Messages   uint64            `json:"messages"`
						Dialogs    int               `json:"dialogs"`
						Requests   map[string]uint64 `json:"requests"`
						Responses  map[string]uint64 `json:"responses"`
						Transports map[string]uint64 `json:"transports"`
					} `json:"store"`
					Notes   []string `json:"notes"`
					Streams struct {
						TLSDecrypted uint64 `json:"tls_decrypted"`
						TLSOnSIPS    uint64 `json:"tls_on_sips_port"`
						TLSKeys      struct {
							Sessions int `json:"sessions"`
						} `json:"tls_keys"`
					} `json:"streams"`
				} `json:"data"`
			}
			if err := json.Unmarshal([]byte(blocks[0]), &report); err != nil {
				t.Fatal(err)
			}
			r := report.Data
			// tshark 4.0.17 with the same keys: 13 SIP messages on one
			// Call-ID (../shared/testdata/sip/PROVENANCE.md).
			if r.Store.Messages != 13 || r.Store.Dialogs != 1 || r.Store.Transports["tls"] != 13 {
				t.Errorf("store %+v, want tshark's 13 messages over tls in 1 dialog (answer %v)", r.Store, env["ok"])
			}
			if r.Streams.TLSDecrypted != 2 || r.Streams.TLSOnSIPS != 0 || r.Streams.TLSKeys.Sessions != 1 {
				t.Errorf("streams %+v, want both directions decrypted with the one session's keys", r.Streams)
			}
			if notes := strings.Join(r.Notes, " "); !strings.Contains(notes, "2 TLS streams were decrypted") || strings.Contains(notes, "not read") {
				t.Errorf("notes %q, want the two streams said decrypted and none unread", r.Notes)
			}

			var answers bytes.Buffer
			cc.everyTool(goldenFixed, func(tool string, blocks []string) {
				for _, b := range blocks {
					answers.WriteString(b)
				}
			})
			res, err := cc.s.CallTool(cc.ctx, &sdk.CallToolParams{Name: "export_capture", Arguments: map[string]any{"call_id": cc.seen["call_id"]}})
			if err != nil {
				t.Fatal(err)
			}
			var export struct {
				Data struct {
					Messages int `json:"messages"`
				} `json:"data"`
			}
			for i, c := range res.Content {
				if tc, ok := c.(*sdk.TextContent); ok {
					if i == 0 {
						_ = json.Unmarshal([]byte(tc.Text), &export)
					}
					answers.WriteString(tc.Text)
				}
			}
			// The export finds the dialog's TLS frames as the analysis
			// did, and writes them as captured: encrypted, no secrets block.
			if export.Data.Messages != 13 {
				t.Errorf("export_capture found %d of the dialog's 13 messages", export.Data.Messages)
			}
			leaks(t, "an answer", answers.Bytes(), secrets)
			leaks(t, "the daemon's log", []byte(cc.stderr.String()), secrets)
			auditText, err := os.ReadFile(audit)
			if err != nil || len(auditText) == 0 {
				t.Fatalf("audit file: %v (%d bytes)", err, len(auditText))
			}
			leaks(t, "the audit log", auditText, secrets)
			files, _ := filepath.Glob(filepath.Join(exports, "*"))
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				leaks(t, "export "+filepath.Base(f), b, secrets)
				if _, has := keyLogOf2(t, f); has {
					t.Errorf("export %s carries a decryption secrets block", filepath.Base(f))
				}
			}
			t.Logf("%d answer bytes, %d log bytes, %d audit bytes, %d exports searched", answers.Len(), len(cc.stderr.String()), len(auditText), len(files))
		})
	}
}

// keyLogOf2 says whether a capture file has a secrets block, and how
// many bytes of secrets it holds.
func keyLogOf2(t *testing.T, path string) (int, bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := pcapfile.NewReader(f)
	if err != nil {
		return 0, false // not a capture file: it carries no block
	}
	n, has := 0, false
	rd.OnSecrets(func(_ uint32, data []byte) { n, has = n+len(data), true })
	for {
		if _, err := rd.Next(); err != nil {
			return n, has
		}
	}
}

// dropSecrets copies a pcapng file without its Decryption Secrets
// Blocks (Wireshark 4.0's editcap cannot rewrite the reference file).
func dropSecrets(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	var order be.ByteOrder = be.LittleEndian
	for len(b) >= 12 {
		if be.BigEndian.Uint32(b) == 0x0a0d0d0a { // a section header: its byte order
			order = be.LittleEndian
			if be.BigEndian.Uint32(b[8:]) == 0x1a2b3c4d {
				order = be.BigEndian
			}
		}
		n := int(order.Uint32(b[4:]))
		if n < 12 || n > len(b) {
			t.Fatalf("%s: block length %d", src, n)
		}
		if order.Uint32(b) != 0x0a {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	if err := os.WriteFile(dst, out, 0o600); err != nil {
		t.Fatal(err)
	}
}
