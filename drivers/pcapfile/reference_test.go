package pcapfile_test

// An external test package: tools/refdata, which finds the shared
// reference data, imports pcapfile.

import (
	"path/filepath"
	"testing"

	"fieldtap/drivers/pcapfile"
	"fieldtap/tools/refdata"
)

// TestReferenceCaptures reads every capture in the shared reference data to
// its end without a format error.
func TestReferenceCaptures(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	files, _ := filepath.Glob(filepath.Join(dir, "*.pcap*"))
	if len(files) == 0 {
		t.Skipf("reference captures not found in %s (shared testdata is not part of the repository)", dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			n := 0
			refdata.EachRecord(t, f, func(pcapfile.Record) { n++ })
			if n == 0 {
				t.Error("no records")
			}
		})
	}
}
