package config

import (
	"strings"
	"testing"
)

func TestDBCPreloadValidate(t *testing.T) {
	c, err := Parse("t.toml", []byte("[dbc]\npreload = [\"truck.dbc\", \"oem/engine.dbc\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil || len(c.DBC.Preload) != 2 {
		t.Fatalf("two names inside data_dir: %v %v", c.DBC.Preload, err)
	}
	for _, tc := range []struct {
		preload []string
		dataDir string
		want    string
	}{
		{preload: []string{"../etc/x.dbc"}, dataDir: DefaultDataDir, want: `dbc.preload "../etc/x.dbc": want a file name inside store.data_dir`},
		{preload: []string{"/abs.dbc"}, dataDir: DefaultDataDir, want: `dbc.preload "/abs.dbc": want a file name`},
		{preload: []string{"a.dbc", "x/a.dbc"}, dataDir: DefaultDataDir, want: `dbc.preload "x/a.dbc": another file is kept under the name a`},
		{preload: []string{"a.dbc"}, want: "dbc.preload: store.data_dir is empty"},
		{preload: strings.Fields("1 2 3 4 5 6 7 8 9"), dataDir: DefaultDataDir, want: "dbc.preload: 9 files, at most 8"},
	} {
		c := Default()
		c.DBC.Preload, c.Store.DataDir = tc.preload, tc.dataDir
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want …%s", tc.preload, err, tc.want)
		}
	}
}
