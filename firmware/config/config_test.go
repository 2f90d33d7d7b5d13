package config

import (
	"fieldtap/board"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fieldtapd.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadOverridesDefaults(t *testing.T) {
	c, err := Load(write(t, "board = \"none\"\nsources = [\"a.pcap\"]\n[mcp]\ntransport = \"stdio\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Board != "none" || c.MCP.Transport != "stdio" || c.MCP.Listen != DefaultListen || len(c.Sources) != 1 {
		t.Errorf("config = %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

func TestUnknownKeyIsNamed(t *testing.T) {
	_, err := Load(write(t, "[mcp]\nlisten = \"127.0.0.1:1\"\nlisen = \"x\"\n"))
	if err == nil || !strings.Contains(err.Error(), "mcp.lisen") {
		t.Fatalf("err = %v, want it to name mcp.lisen", err)
	}
}

func TestValidateNamesTheBadValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"board", func(c *Config) { c.Board = "pi" }, `board "pi"`},
		{"transport", func(c *Config) { c.MCP.Transport = "ws" }, "mcp.transport"},
		{"listen", func(c *Config) { c.MCP.Listen = "8731" }, "mcp.listen"},
		{"speed", func(c *Config) { c.ReplaySpeed = "fast" }, "replay_speed"},
		{"none without sources", func(c *Config) { c.Board = "none" }, "at least one source"},
		{"handoff", func(c *Config) { c.Store.HandoffDepth = 0 }, "handoff_depth"},
		{"vxlan port", func(c *Config) { c.VXLANPorts = []int{4789, 70000} }, "vxlan_ports: 70000 is not a UDP port"},
		{"vxlan port twice", func(c *Config) { c.VXLANPorts = []int{8472, 8472} }, "vxlan_ports: 8472 is listed twice"},
		{"vxlan ports", func(c *Config) { c.VXLANPorts = []int{1, 2, 3, 4, 5} }, "vxlan_ports [1 2 3 4 5]: at most 4 ports"},
		{"sips port", func(c *Config) { c.SIPSPorts = []int{5061, 0} }, "sips_ports: 0 is not a TCP port"},
		{"sips port twice", func(c *Config) { c.SIPSPorts = []int{5061, 5061} }, "sips_ports: 5061 is listed twice"},
		{"sips ports", func(c *Config) { c.SIPSPorts = []int{1, 2, 3, 4, 5, 6, 7, 8, 9} }, "sips_ports [1 2 3 4 5 6 7 8 9]: at most 8 ports"},
		{"port driver", func(c *Config) { c.Ports = []board.Port{{Name: "x", Driver: "can9", Device: "/dev/x"}} }, `driver "can9"`},
		{"port twice", func(c *Config) {
			c.Ports = []board.Port{{Name: "x", Driver: "j1708", Device: "/dev/a"}, {Name: "x", Driver: "j1708", Device: "/dev/b"}}
		}, "named twice"},
		{"port device", func(c *Config) { c.Ports = []board.Port{{Name: "x", Driver: "j1708"}} }, "no device"},
		{"silent_after not a duration", func(c *Config) {
			c.Ports = []board.Port{{Name: "x", Driver: "j1708", Device: "/dev/a", SilentAfter: "a while"}}
		}, `port "x": silent_after "a while"`},
		{"silent_after below the watchdog's look", func(c *Config) {
			c.Ports = []board.Port{{Name: "x", Driver: "j1708", Device: "/dev/a", SilentAfter: "500ms"}}
		}, `silent_after "500ms"`},
		{"hep port with a device", func(c *Config) { c.Ports = []board.Port{{Name: "h", Driver: "hep", Device: "eth0"}} }, `port "h": device "eth0": a hep port has no device`},
		{"hep port off loopback without a key", func(c *Config) { c.Ports = []board.Port{{Name: "h", Driver: "hep", Listen: "0.0.0.0:9060"}} }, `port "h": listen "0.0.0.0:9060" is not loopback: set auth_key`},
		{"hep port max_frame", func(c *Config) { c.Ports = []board.Port{{Name: "h", Driver: "hep", MaxFrame: 70000}} }, "max_frame 70000: want 512 to 65535"},
		{"hep port max_connections", func(c *Config) { c.Ports = []board.Port{{Name: "h", Driver: "hep", MaxConnections: -1}} }, "max_connections -1"},
		{"hep port buffer_bytes", func(c *Config) { c.Ports = []board.Port{{Name: "h", Driver: "hep", BufferBytes: 1}} }, "buffer_bytes 1"},
		{"hep port listen", func(c *Config) { c.Ports = []board.Port{{Name: "h", Driver: "hep", Listen: "9060"}} }, `listen "9060": want host:port`},
		{"hep keys on another driver", func(c *Config) {
			c.Ports = []board.Port{{Name: "x", Driver: "j1708", Device: "/dev/a", AuthKey: "k"}}
		}, `keys of a hep port, not of driver "j1708"`},
		{"negative cap", func(c *Config) { n := -1; c.MCP.MaxConcurrent = &n }, "mcp.max_concurrent -1"},
		{"negative rate", func(c *Config) { n := -3; c.MCP.RateLimitPerPeer = &n }, "mcp.rate_limit_per_peer -3"},
		{"negative budget", func(c *Config) { c.MCP.MaxResponseBytes = -1 }, "mcp.max_response_bytes"},
		{"button wait too short", func(c *Config) { c.Transmit.ButtonWait = "10ms" }, "transmit.button_wait"},
		{"button wait not a duration", func(c *Config) { c.Transmit.ButtonWait = "soon" }, "transmit.button_wait"},
		{"confirm file off the sim board", func(c *Config) { c.Board = "qemu-virt"; c.Transmit.ConfirmFile = "/run/x" }, "transmit.confirm_file"},
		{"sim ports off the sim board", func(c *Config) { c.Board = "qemu-virt"; c.Transmit.SimPorts = []string{"can0"} }, "transmit.sim_ports"},

		{"recorder segment", func(c *Config) { c.Recorder.Enabled, c.Recorder.SegmentBytes = true, 1000 }, "recorder.segment bytes 1000"},
		{"recorder age", func(c *Config) { c.Recorder.Enabled, c.Recorder.SegmentAge = true, "soon" }, "recorder.segment_age"},
		{"recorder quota", func(c *Config) { c.Recorder.Enabled, c.Recorder.QuotaBytes = true, 1<<20 }, "recorder.quota"},
		{"recorder dir", func(c *Config) { c.Recorder.Enabled, c.Recorder.Dir = true, "" }, "recorder.dir"},
		{"trigger kind", func(c *Config) {
			c.Recorder.Enabled, c.Recorder.Triggers = true, []Trigger{{Kind: "dm2"}}
		}, `recorder.trigger 1: kind "dm2"`},
		{"trigger filter", func(c *Config) {
			c.Recorder.Enabled, c.Recorder.Triggers = true, []Trigger{{Kind: TriggerSIPFilter, Filter: "final_code >>"}}
		}, "kind sip_filter needs a filter"},
		{"trigger window", func(c *Config) {
			c.Recorder.Enabled, c.Recorder.Triggers = true, []Trigger{{Kind: TriggerDM1, After: "1h"}}
		}, "recorder.trigger 1: after"},
		{"upload quota", func(c *Config) { c.Files.MaxFileBytes = 0 }, "files.max_file_bytes 0"},
		{"upload total below one file", func(c *Config) { c.Files.MaxTotalBytes = 1 }, "max_total_bytes 1"},
		{"trigger without recorder", func(c *Config) { c.Recorder.Triggers = []Trigger{{Kind: TriggerDM1}} }, "set recorder.enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.edit(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %s", err, tc.want)
			}
		})
	}
}

// TestCheck: Check passes what Validate passes, unchanged, and refuses
// what it refuses with its error.
func TestCheck(t *testing.T) {
	good := Default()
	good.Board = BoardNone
	good.Sources = []string{"a.pcap"}
	c, err := good.Check()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Config(); got.Board != BoardNone || len(got.Sources) != 1 || got.Sources[0] != "a.pcap" {
		t.Errorf("Check(%+v).Config() = %+v", good, got)
	}
	bad := good
	bad.MCP.Transport = "ws"
	if _, err := bad.Check(); err == nil || err.Error() != bad.Validate().Error() {
		t.Errorf("Check of a bad config: err %v, want Validate's %v", err, bad.Validate())
	}
}

func TestTransmitButtonKeys(t *testing.T) {
	c, err := Load(write(t, "[transmit]\nrequire_button = true\nbutton_wait = \"45s\"\nconfirm_file = \"/run/fieldtap/confirm\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !c.Transmit.RequireButton || c.Transmit.Wait().Seconds() != 45 || c.Transmit.ConfirmFile != "/run/fieldtap/confirm" {
		t.Errorf("transmit %+v", c.Transmit)
	}
	if d := Default().Transmit; d.RequireButton || d.ButtonWait != "30s" {
		t.Errorf("defaults %+v: want the button off, 30s", d)
	}
}

func TestSpeed(t *testing.T) {
	for in, want := range map[string]float64{"realtime": 1, "max": 0, "10x": 10, "2.5": 2.5} {
		c := Default()
		c.ReplaySpeed = in
		if got, err := c.Speed(); err != nil || got != want {
			t.Errorf("Speed(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

func TestDocumentedExampleLoads(t *testing.T) {
	// docs/configuration.md embeds this file; it must stay loadable.
	c, err := Load(filepath.Join("..", "..", "docs", "fieldtapd.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// Every embedded board profile's ports pass the same checks as a
// configuration file's [[port]] tables.
func TestProfilePortsValidate(t *testing.T) {
	for _, name := range board.Names() {
		t.Run(name, func(t *testing.T) {
			p, err := board.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if p.Description == "" || p.Reference == "" {
				t.Error("a profile says what it is and where its pinout came from")
			}
			c := Default()
			c.Board = name
			c.Ports = p.Ports
			if err := c.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestSilentAfterDefaultsAndParses(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want time.Duration
	}{
		{set: "", want: DefaultSilentAfter},
		{set: "2m", want: 2 * time.Minute},
		{set: "1s", want: time.Second},
	} {
		if got, err := SilentAfter(board.Port{SilentAfter: tc.set}); err != nil || got != tc.want {
			t.Errorf("silent_after %q = %v, %v; want %v", tc.set, got, err, tc.want)
		}
	}
}

// A hep port needs no key but its driver; off loopback, its auth key.
func TestHEPPortValidates(t *testing.T) {
	for _, p := range []board.Port{
		{Name: "hep0", Driver: "hep"},
		{Name: "hep0", Driver: "hep", Listen: "0.0.0.0:9060", AuthKey: "k", CaptureIDs: []uint32{2001}, SilentAfter: "10m"},
	} {
		c := Default()
		c.Ports = []board.Port{p}
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
}

// TestDemoConfig: the configuration `make demo` runs loads and enables
// the sim board's can0 with its arm and confirm files.
func TestDemoConfig(t *testing.T) {
	c, err := Load("../../scripts/demo.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Board != "sim" || len(c.Transmit.SimPorts) != 1 || c.Transmit.SimPorts[0] != "can0" ||
		c.Transmit.ArmFile == "" || c.Transmit.ConfirmFile == "" || c.Transmit.AuditFile == "" || !c.Transmit.RequireButton {
		t.Errorf("demo config %+v", c.Transmit)
	}
}
