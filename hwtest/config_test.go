package hwtest

import (
	"bytes"
	"os"
	"os/exec"
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
	if len(cfg.Ports) != 3 || cfg.Ports[0].Name != TunnelPort || cfg.Ports[0].Device != TunnelUnderlay ||
		cfg.Ports[1].Name != "can0" || !cfg.Ports[1].Transmit || cfg.Transmit.AuditFile == "" ||
		cfg.Ports[2].Name != FDPort || cfg.Ports[2].Device != FDDevice || cfg.Ports[2].Driver != "socketcan" {
		t.Errorf("config %+v: want the tunnel underlay's port, can0 with transmit and an audit file, the CAN FD vcan", cfg)
	}
	if !cfg.Recorder.Enabled || cfg.Recorder.Dir != RecorderMount+"/recorder" {
		t.Errorf("recorder %+v: want it on, on the virtio disk", cfg.Recorder)
	}
}

// TestGuestScriptsParse: the guest's /init and the image's init script are
// shell that busybox runs; a syntax error would show only as a boot that
// never gets Ready, so /bin/sh -n checks them here.
func TestGuestScriptsParse(t *testing.T) {
	files, err := FirmwareFiles()
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"init": []byte(InitScript()), InitDPath: files[InitDPath].Data, "etc/default/fieldtapd": files["etc/default/fieldtapd"].Data} {
		cmd := exec.Command("/bin/sh", "-n")
		cmd.Stdin = bytes.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
}
