package mcp

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// answerDocuments are the services types an answer may hold as they are:
// documents with a contract of their own (docs/architecture.md, "Answers
// and documents"), and the fencing types until they move into mcp/.
var answerDocuments = []string{
	"ports.Status", "budget.Use", "recorder.PortStatus", "recorder.PortRefill", "recorder.Gap",
	"untrusted.Text", "untrusted.Body",
}

// TestAnswersAreRowsBesideTheirTools walks every tool's answer type: a
// type from services/ is a document listed above or a fencing type,
// never a value services/ returns for its own use, so renaming a field
// in services/ cannot change an answer.
func TestAnswersAreRowsBesideTheirTools(t *testing.T) {
	for _, b := range allBundles() {
		for _, d := range b.tools {
			v := reflect.ValueOf(d)
			if inner := v.FieldByName("tool"); inner.IsValid() { // a linkedTool wraps its tool
				v = inner
			}
			for _, name := range servicesTypes(v.FieldByName("run").Type().Out(0)) {
				if !slices.Contains(answerDocuments, name) {
					t.Errorf("%s answers with services/%s: declare its row in mcp/ beside the tool, or list the document", d.toolName(), name)
				}
			}
		}
	}
}

// servicesTypes lists the services types t is built from, as pkg.Name,
// following what encoding/json encodes.
func servicesTypes(t reflect.Type) []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		if seen[t] {
			return
		}
		seen[t] = true
		if pkg, isServices := strings.CutPrefix(t.PkgPath(), "fieldtap/services/"); isServices {
			out = append(out, pkg+"."+t.Name())
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				if f := t.Field(i); (f.IsExported() || f.Anonymous) && f.Tag.Get("json") != "-" {
					walk(f.Type)
				}
			}
		}
	}
	walk(t)
	return out
}
