package daemon

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"fieldtap/drivers/filesource"
	"fieldtap/firmware/config"
	"fieldtap/services/dbc"
	"fieldtap/services/tlsdecrypt"
	"fieldtap/services/upload"
)

// newUploads is the upload table over store.capture_dir (captures the
// --source detector reads, what open_capture opens) and store.data_dir
// (DBC databases for dbc_load, and TLS key logs, which the box reads from
// there by their name).
func newUploads(cfg config.Config) (*upload.Table, error) {
	captures, err := filepath.Abs(cfg.Store.CaptureDir)
	if err != nil {
		return nil, err
	}
	data, err := filepath.Abs(cfg.Store.DataDir)
	if err != nil {
		return nil, err
	}
	return upload.New([]upload.Area{
		{Name: capturesRoot, Dir: captures, Check: checkCapture},
		{Name: dataRoot, Dir: data, Check: checkData},
	}, upload.Limits{MaxFileBytes: cfg.Files.MaxFileBytes, MaxTotalBytes: cfg.Files.MaxTotalBytes})
}

// checkCapture takes what the --source detector reads, named as
// list_files names it.
func checkCapture(_, path string) (string, error) {
	d, err := filesource.Describe(path, 0)
	if err != nil {
		return "", err
	}
	if d.Format == "" {
		return "", fmt.Errorf("the captures area takes pcap, pcapng, candump -l or J1708 logs: %s", d.Refused)
	}
	if d.Format == filesource.FormatPcap && d.Container != "" {
		return string(d.Container), nil
	}
	return string(d.Format), nil
}

// checkData takes a TLS key log under a name the key log loader reads
// (tlsdecrypt.KeyFileSuffixes) holding at least one entry it knows, and
// anything else as a DBC database dbc_load would load.
func checkData(name, path string) (string, error) {
	if slices.Contains(tlsdecrypt.KeyFileSuffixes, filepath.Ext(name)) {
		data, err := readBounded(path, tlsdecrypt.MaxKeyLogFile)
		if err != nil {
			return "", err
		}
		n := 0
		if err := tlsdecrypt.ParseKeyLog(data, func(string, [32]byte, []byte) { n++ }); err != nil {
			return "", fmt.Errorf("not a TLS key log: %w", err)
		}
		if n == 0 {
			return "", fmt.Errorf("not a TLS key log: no CLIENT_RANDOM or TLS 1.3 secret line")
		}
		return "tls_keylog", nil
	}
	data, err := readBounded(path, dbc.MaxFileBytes)
	if err != nil {
		return "", err
	}
	if _, err := dbc.Parse(name, data); err != nil {
		return "", fmt.Errorf("the data area takes DBC databases and TLS key logs (named *%s): not a DBC: %w", strings.Join(tlsdecrypt.KeyFileSuffixes, " or *"), err)
	}
	return "dbc", nil
}

// readBounded reads path, refusing one over limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("over the %d bytes this area's check reads", limit)
	}
	return data, nil
}
