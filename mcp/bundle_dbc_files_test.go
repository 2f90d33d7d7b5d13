package mcp

import (
	"os"
	"path/filepath"
	"testing"

	"fieldtap/tools/refdata"
)

// dbc_files lists the data directory's DBC files, a subfolder's too,
// with the databases loaded from each; other files and symbolic links
// are not listed.
func TestDBCFilesListsTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	demo, err := os.ReadFile(refdata.File(t, "can", "css_CSS-Electronics-SAE-J1939-DEMO.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	loose := "BO_ 1 M: 8 N\n SG_ S : 0|8@1+ (1,0) [0|255] \"\" N\nVAL_ 1 S 0 \"off\" 1 \"on\"\n"
	must(t, os.Mkdir(filepath.Join(dir, "oem"), 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "demo.dbc"), demo, 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "oem", "Loose.DBC"), []byte(loose), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600))
	must(t, os.Symlink(filepath.Join(dir, "demo.dbc"), filepath.Join(dir, "link.dbc")))
	d := vehicleDeps(t, dir, nil)
	c := newChecker(t, testServer(t, d, dbcLoad, dbcFiles))
	if _, env := c.call("dbc_load", map[string]any{"file": "oem/Loose.DBC", "name": "loose"}); env["ok"] != true {
		t.Fatalf("dbc_load: %v", env["errors"])
	}
	_, env := c.call("dbc_files", map[string]any{})
	files := data(env)["files"].([]any)
	if len(files) != 2 || data(env)["data_dir"] != dir || data(env)["more_files"] != 0.0 || data(env)["walk_incomplete"] != false {
		t.Fatalf("answer %v", data(env))
	}
	first, second := files[0].(map[string]any), files[1].(map[string]any)
	if first["file"] != "demo.dbc" || first["size_bytes"] != float64(len(demo)) || len(first["loaded"].([]any)) != 0 {
		t.Errorf("demo.dbc %v", first)
	}
	loaded := second["loaded"].([]any)
	if second["file"] != "oem/Loose.DBC" || second["size_bytes"] != float64(len(loose)) || len(loaded) != 1 {
		t.Fatalf("oem/Loose.DBC %v", second)
	}
	l := loaded[0].(map[string]any)
	if l["name"] != "loose" || l["messages"] != 1.0 || l["signals"] != 1.0 || len(l["warnings"].([]any)) != 1 ||
		l["warnings"].([]any)[0] != "line 3: VAL_ statement does not end with ';': read as if it did" {
		t.Errorf("loaded %v", l)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
