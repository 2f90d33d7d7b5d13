package sip

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"testing"
)

// TestForUpdateCopiesEveryField reads forUpdate's source: its Dialog
// literal and the assignments after it name every field of Dialog but
// the memo words, so a field added to Dialog and not to the copy fails
// here instead of vanishing from a dialog the store changes.
func TestForUpdateCopiesEveryField(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "store.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "forUpdate" {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				got = append(got, n.Key.(*ast.Ident).Name)
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if s, ok := l.(*ast.SelectorExpr); ok {
						got = append(got, s.Sel.Name)
					}
				}
			}
			return true
		})
	}
	memo := []string{"figsRev", "figsWord", "figsDur", "figsPDD", "problems"}
	ty := reflect.TypeFor[Dialog]()
	for i := range ty.NumField() {
		name := ty.Field(i).Name
		if in := slices.Contains(got, name); in == slices.Contains(memo, name) {
			t.Errorf("Dialog.%s: copied by forUpdate %v, a memo word %v", name, in, !in)
		}
	}
}
