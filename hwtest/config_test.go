package hwtest

import (
	"os"
	"path/filepath"
	"testing"

	"fieldtap/firmware/config"
)

// TestGuestConfigLoads checks the guest's configuration on the host, so a
// typo fails here rather than as a boot that never gets Ready.
func TestGuestConfigLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fieldtapd.toml")
	if err := os.WriteFile(path, []byte(GuestConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Ports) != 1 || cfg.Ports[0].Name != "can0" || !cfg.Ports[0].Transmit || cfg.Transmit.AuditFile == "" {
		t.Errorf("config %+v: want can0 with transmit and an audit file", cfg)
	}
	if !cfg.Recorder.Enabled || cfg.Recorder.Dir != RecorderMount+"/recorder" {
		t.Errorf("recorder %+v: want it on, on the virtio disk", cfg.Recorder)
	}
}
