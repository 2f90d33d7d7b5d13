package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryFlagIsDocumented keeps docs/configuration.md's flag table in
// step with the flags fieldtapd really takes.
func TestEveryFlagIsDocumented(t *testing.T) {
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"-h"}, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("-h exited %d", code)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	flags := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(stderr.String(), -1)
	if len(flags) < 5 {
		t.Fatalf("found only %d flags in the usage text:\n%s", len(flags), stderr.String())
	}
	for _, f := range flags {
		if !strings.Contains(string(doc), "`--"+f[1]) {
			t.Errorf("docs/configuration.md does not document --%s", f[1])
		}
	}
}
