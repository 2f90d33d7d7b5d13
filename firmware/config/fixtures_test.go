package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestNoKeyLoadsConformanceFixtures: the MCP conformance suite's
// fixtures exist only in a build with the mcpconformance tag
// (mcp/conformance_fixtures.go); no configuration key, at any depth,
// names them, so a box's configuration cannot turn them on.
func TestNoKeyLoadsConformanceFixtures(t *testing.T) {
	var keys []string
	var walk func(prefix string, ty reflect.Type)
	walk = func(prefix string, ty reflect.Type) {
		for ty.Kind() == reflect.Slice || ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct {
			return
		}
		for f := range ty.Fields() {
			key := strings.Split(f.Tag.Get("toml"), ",")[0]
			if key == "" || key == "-" {
				key = f.Name
			}
			keys = append(keys, prefix+key)
			walk(prefix+key+".", f.Type)
		}
	}
	walk("", reflect.TypeFor[Config]())
	if len(keys) < 20 {
		t.Fatalf("walked %d keys: the walk missed the configuration", len(keys))
	}
	for _, k := range keys {
		l := strings.ToLower(k)
		if strings.Contains(l, "conformance") || strings.Contains(l, "fixture") {
			t.Errorf("configuration key %s names the conformance fixtures", k)
		}
	}
}
