package fieldtap_test

// The import rules of DESIGN.md §2, checked on the real dependency graph:
// services/ never reaches mcp/; drivers/ reaches neither services/ nor
// mcp/; mcp/ never reaches drivers/ or board/ (a tool reads stores, and
// bytes for a bus go through services/).

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test=false", "-json=ImportPath,Deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rules := map[string][]string{
		"fieldtap/services/": {"fieldtap/mcp"},
		"fieldtap/drivers/":  {"fieldtap/services/", "fieldtap/mcp"},
		"fieldtap/mcp":       {"fieldtap/drivers/", "fieldtap/board/"},
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	checked := 0
	for {
		var p struct {
			ImportPath string
			Deps       []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for from, banned := range rules {
			if !strings.HasPrefix(p.ImportPath, from) {
				continue
			}
			checked++
			for _, d := range p.Deps {
				for _, b := range banned {
					if strings.HasPrefix(d, b) {
						t.Errorf("%s depends on %s", p.ImportPath, d)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package matched a rule: the test is looking at the wrong tree")
	}
}
