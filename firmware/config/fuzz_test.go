package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse reads anything as the TOML configuration: no input panics
// Parse or Validate, an unknown key is named, and a file that parses and
// validates keeps to the bounds Validate promises.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "..", "docs", "fieldtapd.example.toml")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("board = \"none\"\nsources = [\"a.log\"]\n[[port]]\nname = \"can1\"\ndriver = \"slcan\"\ndevice = \"/dev/ttyACM0\"\nbitrate = 500000\n"))
	f.Add([]byte("[mcp]\nlisten = \"0.0.0.0:8731\"\nmax_concurrent = -1\n"))
	f.Add([]byte("[mcp]\nlisen = 1\n"))
	f.Add([]byte("[[rule]]\nname = \"d\"\nkind = \"port_drops\"\nport = \"span0\"\nop = \"above\"\nwindow = \"5m\"\nseverity = \"warning\"\n"))
	f.Add([]byte("replay_speed = \"10x\"\n[media]\ninterval = \"5s\"\n[transmit]\nrate_window = \"1s\"\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := Parse("fuzz.toml", text)
		if err != nil {
			if strings.Contains(err.Error(), "unknown key") && !strings.Contains(err.Error(), "fuzz.toml") {
				t.Fatalf("an unknown key error that does not name the file: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			return
		}
		if _, err := c.Speed(); err != nil {
			t.Fatalf("a validated config whose speed does not parse: %v", err)
		}
		if c.MCP.MaxConcurrent != nil && *c.MCP.MaxConcurrent < 0 {
			t.Fatalf("validated a negative max_concurrent")
		}
	})
}
